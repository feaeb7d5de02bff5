// The client matrix's four rounds for the Go clients (tests/matrix/): IBM/sarama, franz-go
// (kgo, and kadm for the admin round) and segmentio/kafka-go, at the versions go.mod pins.
//
//	go-rounds CLIENT ROUND BOOTSTRAP TOPIC GROUP
//
// CLIENT: sarama | franz-go | kafka-go; ROUND: produce | assign-consume | group | admin (what
// each does: tests/matrix/rounds.py). Prints one JSON line: {"outcome": "pass"} or
// {"outcome": NAME, "message": ...}, NAME the error's Go type, with Kafka's error name for an
// error code ("sarama.KError(UNSUPPORTED_VERSION)").
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

const (
	records      = 6
	perPartition = 2 // in the group round's three partitions
	deadline     = 60 * time.Second
)

// failed: the round ran without a client error but not to its end.
type failed struct{ what string }

func (f failed) Error() string { return f.what }

func value(i int) string { return fmt.Sprintf("v%d", i) }

func checkValues(values []string) error {
	if len(values) != records {
		return failed{fmt.Sprintf("read %v", values)}
	}
	for i, v := range values {
		if v != value(i) {
			return failed{fmt.Sprintf("read %v", values)}
		}
	}
	return nil
}

// group tracks a group round's members: the records read by any of them and what each holds.
type group struct {
	mu   sync.Mutex
	read map[[2]int64]bool
	held []map[int32]int64 // per member: partition -> next offset to read, while assigned
}

func newGroup() *group {
	return &group{read: map[[2]int64]bool{}, held: []map[int32]int64{{}, {}, {}}}
}

func (g *group) assigned(member int, partition int32, next int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held[member][partition] = next
}

func (g *group) revoked(member int, partition int32) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.held[member], partition)
}

func (g *group) consumed(member int, partition int32, offset int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.read[[2]int64{int64(partition), offset}] = true
	if next, ok := g.held[member][partition]; ok && offset+1 > next {
		g.held[member][partition] = offset + 1
	}
}

// done: every record read, each member holding one partition read to its end, together all three.
func (g *group) done() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	all := map[int32]bool{}
	for _, held := range g.held {
		if len(held) != 1 {
			return false
		}
		for p, next := range held {
			if next < perPartition {
				return false
			}
			all[p] = true
		}
	}
	return len(g.read) >= records && len(all) == 3
}

func (g *group) String() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return fmt.Sprintf("read %d of %d; held %v", len(g.read), records, g.held)
}

// wait until the group is done, a member fails, or the deadline passes.
func (g *group) wait(failures <-chan error) error {
	end := time.After(deadline)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !g.done() {
		select {
		case err := <-failures:
			return err
		case <-end:
			return failed{g.String()}
		case <-tick.C:
		}
	}
	return nil
}

var clients = map[string]func(round, bootstrap, topic, group string) error{
	"sarama":   saramaRound,
	"franz-go": franzRound,
	"kafka-go": kafkaGoRound,
}

func main() {
	client, round, bootstrap, topic, groupID := os.Args[1], os.Args[2], os.Args[3], os.Args[4], os.Args[5]
	answer := map[string]string{"outcome": "pass"}
	if err := clients[client](round, bootstrap, topic, groupID); err != nil {
		answer = map[string]string{"outcome": named(err), "message": err.Error()}
	}
	line, _ := json.Marshal(answer)
	fmt.Println(string(line))
	os.Exit(0)
}

func timeout() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), deadline)
}

var errNoRound = errors.New("no such round")

// unknownTopicWait: Kafka answers CreateTopics before its broker's metadata holds the topic, so
// a describe at once may meet UNKNOWN_TOPIC_OR_PARTITION a moment longer; the admin rounds
// describe again until the topic shows, as a user's code would, this long apart.
const unknownTopicWait = 100 * time.Millisecond

// heldBy: a copy of what a member holds.
func (g *group) heldBy(member int) map[int32]int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	held := map[int32]int64{}
	for p, next := range g.held[member] {
		held[p] = next
	}
	return held
}
