// kfake as a benchmark peer: one broker of franz-go's fake cluster (pkg/kfake) on a given
// loopback port, with Kafka's defaults for auto-created topics (auto-creation on, one
// partition). Built on first use by fakebroker/bench/peers.py into its cache folder:
//
//	kfake-peer -port 9092
//
// It prints the broker's address on one line once it listens and runs until SIGTERM or
// SIGINT (or until stdin closes), then closes the cluster.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	port := flag.Int("port", 0, "loopback port to listen on (0: any free one)")
	flag.Parse()
	cluster, err := kfake.NewCluster(
		kfake.Ports(*port),
		kfake.AllowAutoTopicCreation(),
		kfake.DefaultNumPartitions(1),
	)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer cluster.Close()
	fmt.Println(cluster.ListenAddrs()[0])
	stop := make(chan os.Signal, 2)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	closed := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(closed)
	}()
	select {
	case <-stop:
	case <-closed:
	}
}
