package main

import (
	"errors"
	"fmt"

	"github.com/IBM/sarama"
	kafkago "github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kerr"
)

// named: an error's outcome. A Kafka error code by Kafka's name (franz-go's table), whichever
// client's type carries it; any other error by its Go type.
func named(err error) string {
	var saramaCode sarama.KError
	if errors.As(err, &saramaCode) {
		return "sarama.KError(" + kafkaName(int16(saramaCode)) + ")"
	}
	var franzCode *kerr.Error
	if errors.As(err, &franzCode) {
		return "kerr.Error(" + franzCode.Message + ")"
	}
	var kafkaGoCode kafkago.Error
	if errors.As(err, &kafkaGoCode) {
		return "kafka.Error(" + kafkaName(int16(kafkaGoCode)) + ")"
	}
	var round failed
	if errors.As(err, &round) {
		return "Failed"
	}
	return fmt.Sprintf("%T", err)
}

func kafkaName(code int16) string {
	var known *kerr.Error
	if errors.As(kerr.ErrorForCode(code), &known) {
		return known.Message
	}
	return fmt.Sprintf("code %d", code)
}
