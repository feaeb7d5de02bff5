package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

func franzRound(round, bootstrap, topic, groupID string) error {
	seeds := kgo.SeedBrokers(bootstrap)
	ctx, cancel := timeout()
	defer cancel()
	switch round {
	case "produce":
		client, err := kgo.NewClient(seeds, kgo.RequiredAcks(kgo.AllISRAcks()),
			kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			return err
		}
		defer client.Close()
		var batch []*kgo.Record
		for i := 0; i < records; i++ {
			batch = append(batch, &kgo.Record{Topic: topic, Partition: 0, Key: []byte(key(i)),
				Value: []byte(value(i))})
		}
		return client.ProduceSync(ctx, batch...).FirstErr()
	case "assign-consume":
		client, err := kgo.NewClient(seeds, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
			topic: {0: kgo.NewOffset().AtStart()}}))
		if err != nil {
			return err
		}
		defer client.Close()
		var values []string
		for len(values) < records && ctx.Err() == nil {
			fetches := client.PollFetches(ctx)
			for _, fetchErr := range fetches.Errors() {
				if fetchErr.Err != context.DeadlineExceeded {
					return fetchErr.Err
				}
			}
			fetches.EachRecord(func(r *kgo.Record) { values = append(values, string(r.Value)) })
		}
		return checkValues(values)
	case "group":
		return franzGroup(seeds, topic, groupID)
	case "admin":
		client, err := kgo.NewClient(seeds)
		if err != nil {
			return err
		}
		defer client.Close()
		admin := kadm.NewClient(client)
		created, err := admin.CreateTopic(ctx, 2, 1, nil, topic)
		if err == nil {
			err = created.Err
		}
		if err != nil {
			return err
		}
		described, err := admin.ListTopics(ctx, topic)
		for err == nil && errors.Is(described[topic].Err, kerr.UnknownTopicOrPartition) && ctx.Err() == nil {
			time.Sleep(unknownTopicWait)
			described, err = admin.ListTopics(ctx, topic)
		}
		if err != nil {
			return err
		}
		if err := described[topic].Err; err != nil {
			return err
		}
		if n := len(described[topic].Partitions); n != 2 {
			return failed{fmt.Sprintf("described %d partitions", n)}
		}
		configs, err := admin.DescribeTopicConfigs(ctx, topic)
		if err != nil {
			return err
		}
		for _, config := range configs {
			if config.Err != nil {
				return config.Err
			}
		}
		deleted, err := admin.DeleteTopics(ctx, topic)
		if err != nil {
			return err
		}
		return deleted.Error()
	}
	return errNoRound
}

// franzGroup: three group clients polling on goroutines of their own; each commits what it
// read when the round is done, then all leave.
func franzGroup(seeds kgo.Opt, topic, groupID string) error {
	round := newGroup()
	failures := make(chan error, 16)
	ctx, cancel := context.WithCancel(context.Background())
	var members []*kgo.Client
	for i := 0; i < 3; i++ {
		index := i
		member, err := kgo.NewClient(seeds, kgo.ConsumerGroup(groupID), kgo.ConsumeTopics(topic),
			kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.SessionTimeout(10*time.Second), kgo.HeartbeatInterval(500*time.Millisecond),
			kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, assigned map[string][]int32) {
				for _, p := range assigned[topic] {
					round.assigned(index, p, 0)
				}
			}),
			kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, revoked map[string][]int32) {
				for _, p := range revoked[topic] {
					round.revoked(index, p)
				}
			}),
			kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
				for _, p := range lost[topic] {
					round.revoked(index, p)
				}
			}))
		if err != nil {
			cancel()
			return err
		}
		members = append(members, member)
	}
	var running sync.WaitGroup
	for i, member := range members {
		running.Add(1)
		go func(index int, member *kgo.Client) {
			defer running.Done()
			for ctx.Err() == nil {
				fetches := member.PollFetches(ctx)
				for _, fetchErr := range fetches.Errors() {
					if ctx.Err() == nil {
						failures <- fetchErr.Err
						return
					}
				}
				fetches.EachRecord(func(r *kgo.Record) { round.consumed(index, r.Partition, r.Offset) })
			}
		}(i, member)
	}
	err := round.wait(failures)
	cancel()
	running.Wait()
	// Every member commits before any leaves: a leave starts a rebalance, in which a commit
	// may be refused.
	for _, member := range members {
		committing, stop := timeout()
		if commitErr := member.CommitUncommittedOffsets(committing); commitErr != nil && err == nil {
			err = commitErr
		}
		stop()
	}
	for _, member := range members {
		member.Close()
	}
	return err
}
