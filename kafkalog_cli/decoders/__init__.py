"""Decoders of Kafka's internal topics."""
