"""The storage layer, split as Kafka splits it: an index base that owns the file and the
search (:mod:`.index`), offset and time indexes that own their entries, a segment that owns
read/append/recover (:mod:`.segment`), a log that owns the segments (:mod:`.log`)."""
