// Command broker is a Kafka-protocol broker in one process (franz-go's kfake), on loopback, for
// the backfill part of the capture benchmark (test/load/bench.sh with BENCH_BACKFILL=N): it
// prints "listening <host:port>" and runs until SIGTERM or SIGINT.
package main

import (
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1)) // listens on 127.0.0.1
	if err != nil {
		log.Fatal(err)
	}
	defer cluster.Close()
	fmt.Println("listening", cluster.ListenAddrs()[0])
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
}
