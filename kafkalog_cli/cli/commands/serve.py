"""``kafkalog serve``: a Kafka endpoint over a log directory."""

from typing import Annotated

import typer

from ..root import app


@app.command("serve")
def serve(
    log_dir: Annotated[str, typer.Option("--log-dir", metavar="DIR", help="The log directory to serve "
                                         "(on a local filesystem).", show_default=False)],
    listen: Annotated[str | None, typer.Option(
        "--listen", metavar="HOST:PORT", help="HOST:PORT of a PLAINTEXT listener (port 0: any "
        "free port; default 127.0.0.1:9092). --config listeners=... opens several, with TLS "
        "and SASL.", show_default=False)] = None,
    node_id: Annotated[int | None, typer.Option(
        "--node-id", metavar="N", help="This node's id (default: the node.id of the log "
        "directory's meta.properties, or 0 for a new one; a different one is refused, as a "
        "broker refuses it).", show_default=False)] = None,
    allow_remote: Annotated[bool, typer.Option(
        "--allow-remote", help="Allow a PLAINTEXT listener on a non-loopback address. It has "
        "NO authentication: anyone who can connect can read, write and delete. SSL and SASL "
        "listeners do not need it.")] = False,
    advertised_host: Annotated[str | None, typer.Option(
        "--advertised-host", metavar="HOST", help="Host clients are told to connect to (default: the "
        "--listen host).", show_default=False)] = None,
    auto_create_topics: Annotated[bool, typer.Option(
        "--auto-create-topics", help="Create unknown topics a client asks Metadata for.")
    ] = False,
    num_partitions: Annotated[int, typer.Option(
        "--num-partitions", metavar="N", help="Partitions of auto-created topics (and CreateTopics "
        "with -1).")] = 1,
    config: Annotated[list[str] | None, typer.Option(
        "--config", metavar="KEY=VALUE", help="A broker config (repeatable): a topic config "
        "name is that config's default for every topic (min.insync.replicas=2, "
        "segment.bytes=4096); group.initial.rebalance.delay.ms, "
        "group.min.session.timeout.ms, log.roll.hours, the socket server's "
        "socket.request.max.bytes, queued.max.request.bytes, connections.max.idle.ms ... "
        "are the broker's own, and so are the security keys: listeners, "
        "listener.security.protocol.map, advertised.listeners, ssl.* (PEM stores), "
        "sasl.enabled.mechanisms, listener.name.<l>.<mechanism>.sasl.jaas.config, "
        "authorizer.class.name, super.users (docs/serve.md, Security).",
        show_default=False)] = None,
    add_scram: Annotated[list[str] | None, typer.Option(
        "--add-scram", metavar="MECHANISM=[NAME=U,PASSWORD=P]", help="Store a SCRAM "
        "credential in __cluster_metadata before serving, as kafka-storage format "
        "--add-scram spells it (repeatable): SCRAM-SHA-256=[name=admin,password=secret] "
        "(also iterations=, salt=, saltedpassword=).", show_default=False)] = None,
    metrics: Annotated[bool, typer.Option(
        "--metrics", help="Log per-topic BrokerTopicStats rates periodically.")] = False,
    metrics_interval: Annotated[float, typer.Option(
        "--metrics-interval", metavar="SECONDS", help="Seconds between --metrics reports.")
    ] = 10.0,
    read_only: Annotated[bool, typer.Option(
        "--read-only", help="Write nothing to the directory (no lock, checkpoint, index, "
        "snapshot or topic id): Produce, CreateTopics and DeleteTopics are refused with "
        "TOPIC_AUTHORIZATION_FAILED. For inspecting a backup or a broker's copy.")] = False,
    no_recover: Annotated[bool, typer.Option(
        "--no-recover", help="Refuse to start (exit 1) when the directory lacks "
        ".kafka_cleanshutdown, instead of running the log recovery of `kafkalog recover "
        "--truncate` first.")] = False,
) -> None:
    """Serve a log directory to Kafka clients: one node, leader of every partition.

    Speaks ApiVersions, Metadata, Produce, Fetch, ListOffsets, InitProducerId, the
    admin APIs (CreateTopics, DeleteTopics, CreatePartitions, DeleteRecords,
    DescribeConfigs, AlterConfigs, IncrementalAlterConfigs, DescribeCluster,
    DescribeLogDirs), the consumer-group APIs (groups and offsets kept in
    __consumer_offsets, in Kafka's format) and transactions (__transaction_state,
    markers, read_committed). Holds the
    directory's .lock while serving and writes as a broker does (partition.metadata for
    topics without a topic id, indexes, producer snapshots, checkpoints, the
    clean-shutdown marker at exit; docs/serve.md); --read-only writes nothing. A
    directory without the clean-shutdown marker is first recovered as `kafkalog recover
    --truncate` does (quarantine kept); --no-recover refuses instead. A --log-dir that
    does not exist is created, as a broker creates its log directories; the node id is
    meta.properties' node.id. SIGTERM or SIGINT closes it cleanly. Listeners, TLS, SASL
    (PLAIN, SCRAM-SHA-256/512, OAUTHBEARER unsecured) and ACLs (StandardAuthorizer, ACLs
    and SCRAM users in __cluster_metadata) are configured with a broker's keys; a
    PLAINTEXT listener has no authentication.

    \b
    Examples:
      kafkalog serve --log-dir /tmp/kafka-logs --listen 127.0.0.1:9092
      kafkalog serve --log-dir /backups/kafka-logs --read-only
      kafkalog serve --log-dir /tmp/kafka-logs --add-scram 'SCRAM-SHA-512=[name=admin,password=s3cret]' \\
        --config listeners=SASL_SSL://0.0.0.0:9094 --config sasl.enabled.mechanisms=SCRAM-SHA-512 \\
        --config ssl.keystore.type=PEM --config ssl.keystore.location=server.pem \\
        --config authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer \\
        --config super.users=User:admin
    """
    from ...ops.serve import serve as run

    run(log_dir, listen=listen, node_id=node_id, allow_remote=allow_remote,
        advertised_host=advertised_host, auto_create_topics=auto_create_topics,
        num_partitions=num_partitions, configs=config or (), metrics=metrics,
        metrics_interval=metrics_interval, read_only=read_only, no_recover=no_recover,
        add_scram=add_scram or ())
