package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	kafka "github.com/segmentio/kafka-go"
)

func kafkaGoRound(round, bootstrap, topic, groupID string) error {
	ctx, cancel := timeout()
	defer cancel()
	switch round {
	case "produce":
		writer := &kafka.Writer{Addr: kafka.TCP(bootstrap), Topic: topic,
			RequiredAcks: kafka.RequireAll,
			Balancer:     kafka.BalancerFunc(func(kafka.Message, ...int) int { return 0 })}
		defer writer.Close()
		for i := 0; i < records; i++ {
			if err := writer.WriteMessages(ctx, kafka.Message{Key: []byte(key(i)), Value: []byte(value(i))}); err != nil {
				return err
			}
		}
		return nil
	case "assign-consume":
		reader := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{bootstrap}, Topic: topic,
			Partition: 0, MaxWait: 200 * time.Millisecond})
		defer reader.Close()
		if err := reader.SetOffset(kafka.FirstOffset); err != nil {
			return err
		}
		var values []string
		for len(values) < records {
			message, err := reader.ReadMessage(ctx)
			if err != nil {
				return err
			}
			values = append(values, string(message.Value))
		}
		return checkValues(values)
	case "group":
		return kafkaGoGroup(bootstrap, topic, groupID)
	case "admin":
		client := &kafka.Client{Addr: kafka.TCP(bootstrap), Timeout: 15 * time.Second}
		created, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{
			{Topic: topic, NumPartitions: 2, ReplicationFactor: 1}}})
		if err != nil {
			return err
		}
		if err := created.Errors[topic]; err != nil {
			return err
		}
		described, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
		for err == nil && errors.Is(described.Topics[0].Error, kafka.UnknownTopicOrPartition) && ctx.Err() == nil {
			time.Sleep(unknownTopicWait)
			described, err = client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
		}
		if err != nil {
			return err
		}
		if err := described.Topics[0].Error; err != nil {
			return err
		}
		if n := len(described.Topics[0].Partitions); n != 2 {
			return failed{fmt.Sprintf("described %d partitions", n)}
		}
		configs, err := client.DescribeConfigs(ctx, &kafka.DescribeConfigsRequest{
			Resources: []kafka.DescribeConfigRequestResource{{ResourceType: kafka.ResourceTypeTopic, ResourceName: topic}}})
		if err != nil {
			return err
		}
		if err := configs.Resources[0].Error; err != nil {
			return err
		}
		deleted, err := client.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{topic}})
		if err != nil {
			return err
		}
		return deleted.Errors[topic]
	}
	return errNoRound
}

// kafkaGoGroup: three group readers that fetch without committing until the round is done,
// then each commits its last message. kafka-go does not tell a reader's assignment: a member
// holds the partition its last message came from (a partition moved to it is read again from
// its start, nothing being committed yet), read to its end when that message was the last.
func kafkaGoGroup(bootstrap, topic, groupID string) error {
	round := newGroup()
	failures := make(chan error, 16)
	ctx, cancel := context.WithCancel(context.Background())
	var readers []*kafka.Reader
	last := make([]*kafka.Message, 3)
	var running sync.WaitGroup
	for i := 0; i < 3; i++ {
		reader := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{bootstrap}, GroupID: groupID,
			Topic: topic, StartOffset: kafka.FirstOffset, MaxWait: 200 * time.Millisecond,
			SessionTimeout: 10 * time.Second, HeartbeatInterval: 500 * time.Millisecond})
		readers = append(readers, reader)
		running.Add(1)
		go func(index int) {
			defer running.Done()
			for {
				message, err := reader.FetchMessage(ctx)
				if err != nil {
					if ctx.Err() == nil {
						failures <- err
					}
					return
				}
				for p := range round.heldBy(index) {
					if p != int32(message.Partition) {
						round.revoked(index, p)
					}
				}
				round.assigned(index, int32(message.Partition), 0)
				round.consumed(index, int32(message.Partition), message.Offset)
				last[index] = &message
			}
		}(i)
	}
	err := round.wait(failures)
	cancel()
	running.Wait()
	// Every member commits before any leaves: a leave starts a rebalance, in which a commit
	// may be refused.
	for index, reader := range readers {
		if last[index] == nil || err != nil {
			continue
		}
		committing, stop := timeout()
		err = reader.CommitMessages(committing, *last[index])
		stop()
	}
	for _, reader := range readers {
		if closing := reader.Close(); closing != nil && err == nil {
			err = closing
		}
	}
	return err
}
