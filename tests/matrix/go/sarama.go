package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/IBM/sarama"
)

func saramaConfig() *sarama.Config {
	config := sarama.NewConfig()
	config.Net.DialTimeout = 15 * time.Second
	return config
}

func saramaRound(round, bootstrap, topic, groupID string) error {
	brokers := []string{bootstrap}
	switch round {
	case "produce":
		config := saramaConfig()
		config.Producer.RequiredAcks = sarama.WaitForAll
		config.Producer.Return.Successes = true
		config.Producer.Partitioner = sarama.NewManualPartitioner
		producer, err := sarama.NewSyncProducer(brokers, config)
		if err != nil {
			return err
		}
		defer producer.Close()
		for i := 0; i < records; i++ {
			_, _, err := producer.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: 0,
				Key: sarama.StringEncoder(key(i)), Value: sarama.StringEncoder(value(i))})
			if err != nil {
				return err
			}
		}
		return nil
	case "assign-consume":
		consumer, err := sarama.NewConsumer(brokers, saramaConfig())
		if err != nil {
			return err
		}
		defer consumer.Close()
		partition, err := consumer.ConsumePartition(topic, 0, sarama.OffsetOldest)
		if err != nil {
			return err
		}
		defer partition.Close()
		var values []string
		end := time.After(deadline)
		for len(values) < records {
			select {
			case message := <-partition.Messages():
				values = append(values, string(message.Value))
			case err := <-partition.Errors():
				return err
			case <-end:
				return checkValues(values)
			}
		}
		return checkValues(values)
	case "group":
		return saramaGroup(brokers, topic, groupID)
	case "admin":
		admin, err := sarama.NewClusterAdmin(brokers, saramaConfig())
		if err != nil {
			return err
		}
		defer admin.Close()
		if err := admin.CreateTopic(topic, &sarama.TopicDetail{NumPartitions: 2, ReplicationFactor: 1}, false); err != nil {
			return err
		}
		described, err := admin.DescribeTopics([]string{topic})
		for end := time.Now().Add(deadline); err == nil && described[0].Err == sarama.ErrUnknownTopicOrPartition && time.Now().Before(end); {
			time.Sleep(unknownTopicWait)
			described, err = admin.DescribeTopics([]string{topic})
		}
		if err != nil {
			return err
		}
		if described[0].Err != sarama.ErrNoError {
			return described[0].Err
		}
		if len(described[0].Partitions) != 2 {
			return failed{fmt.Sprintf("described %d partitions", len(described[0].Partitions))}
		}
		if _, err := admin.DescribeConfig(sarama.ConfigResource{Type: sarama.TopicResource, Name: topic}); err != nil {
			return err
		}
		return admin.DeleteTopic(topic)
	}
	return errNoRound
}

// saramaMember: one of the group round's members, as a sarama ConsumerGroupHandler.
type saramaMember struct {
	index int
	round *group
}

func (m saramaMember) Setup(session sarama.ConsumerGroupSession) error { return nil }

func (m saramaMember) Cleanup(session sarama.ConsumerGroupSession) error {
	for _, partitions := range session.Claims() {
		for _, p := range partitions {
			m.round.revoked(m.index, p)
		}
	}
	return nil
}

func (m saramaMember) ConsumeClaim(session sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	m.round.assigned(m.index, claim.Partition(), claim.InitialOffset())
	for message := range claim.Messages() {
		m.round.consumed(m.index, message.Partition, message.Offset)
		session.MarkMessage(message, "")
	}
	return nil
}

// saramaGroup: three ConsumerGroups; marked offsets are committed when each closes.
func saramaGroup(brokers []string, topic, groupID string) error {
	round := newGroup()
	failures := make(chan error, 16)
	ctx, cancel := context.WithCancel(context.Background())
	var members []sarama.ConsumerGroup
	var running sync.WaitGroup
	for i := 0; i < 3; i++ {
		config := saramaConfig()
		config.Consumer.Offsets.Initial = sarama.OffsetOldest
		config.Consumer.Group.Session.Timeout = 10 * time.Second
		config.Consumer.Group.Heartbeat.Interval = 500 * time.Millisecond
		member, err := sarama.NewConsumerGroup(brokers, groupID, config)
		if err != nil {
			cancel()
			return err
		}
		members = append(members, member)
		running.Add(1)
		go func(index int) {
			defer running.Done()
			for ctx.Err() == nil {
				if err := member.Consume(ctx, []string{topic}, saramaMember{index, round}); err != nil {
					failures <- err
					return
				}
			}
		}(i)
		go func() {
			for err := range member.Errors() {
				failures <- err
			}
		}()
	}
	err := round.wait(failures)
	cancel()
	running.Wait()
	for _, member := range members {
		if closing := member.Close(); closing != nil && err == nil {
			err = closing
		}
	}
	return err
}

func key(i int) string { return "k" + value(i)[1:] }
