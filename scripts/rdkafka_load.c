/*
 * A small librdkafka load generator for scripts/produce_bench.py: the client the produce
 * benchmark measures brokers with, in C so that the client's own cost stays small and its
 * behaviour is librdkafka's (one partition per ProduceRequest, max.in.flight per connection).
 *
 *   rdkafka_load produce <bootstrap> <topic> <partitions> <records> <size> [key=value ...]
 *   rdkafka_load consume <bootstrap> <topic> <partitions> <records> [key=value ...]
 *
 * produce: sends <records> values of <size> bytes round-robin over the partitions, then
 * waits for every delivery report. consume: reads <records> records from the start of every
 * partition (assign, no group). Either prints one JSON line: records, bytes, seconds, errors,
 * and for produce the mean and maximum delivery latency in milliseconds. key=value pairs are
 * librdkafka settings on top of its defaults (the producer adds enable.idempotence=true
 * unless told otherwise). Exit status 1 on any delivery error.
 */
#include "rdkafka.h" /* built from source: -I<librdkafka>/src */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t now_us(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

struct tally {
        long delivered;
        long errors;
        double latency_sum_ms;
        double latency_max_ms;
        char first_error[256];
};

/* The send time travels with each message as its opaque (a microsecond count). */
static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
        struct tally *t = opaque;
        double ms = (double)(now_us() - (int64_t)(intptr_t)m->_private) / 1000.0;
        (void)rk;
        if (m->err) {
                if (!t->errors++)
                        snprintf(t->first_error, sizeof(t->first_error), "%s",
                                 rd_kafka_err2str(m->err));
                return;
        }
        t->delivered++;
        t->latency_sum_ms += ms;
        if (ms > t->latency_max_ms)
                t->latency_max_ms = ms;
}

static void set(rd_kafka_conf_t *conf, const char *key, const char *value) {
        char err[512];
        if (rd_kafka_conf_set(conf, key, value, err, sizeof(err)) != RD_KAFKA_CONF_OK) {
                fprintf(stderr, "rdkafka_load: %s\n", err);
                exit(2);
        }
}

static void apply(rd_kafka_conf_t *conf, int argc, char **argv) {
        for (int i = 0; i < argc; i++) {
                char *eq = strchr(argv[i], '=');
                if (!eq) {
                        fprintf(stderr, "rdkafka_load: expected key=value, got %s\n", argv[i]);
                        exit(2);
                }
                *eq = '\0';
                set(conf, argv[i], eq + 1);
                *eq = '=';
        }
}

static int produce(const char *bootstrap, const char *topic, int partitions, long records,
                   size_t size, int argc, char **argv) {
        static struct tally tally;
        char err[512];
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        set(conf, "bootstrap.servers", bootstrap);
        set(conf, "enable.idempotence", "true");
        apply(conf, argc, argv);
        rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
        rd_kafka_conf_set_opaque(conf, &tally);
        rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
        if (!rk) {
                fprintf(stderr, "rdkafka_load: %s\n", err);
                return 2;
        }
        /* One shared value: librdkafka copies nothing it is not told to (no F_COPY). */
        char *value = malloc(size);
        memset(value, 'x', size);
        int64_t start = now_us();
        for (long i = 0; i < records; i++) {
                for (;;) {
                        rd_kafka_resp_err_t e = rd_kafka_producev(
                            rk, RD_KAFKA_V_TOPIC(topic),
                            RD_KAFKA_V_PARTITION((int32_t)(i % partitions)),
                            RD_KAFKA_V_VALUE(value, size),
                            RD_KAFKA_V_OPAQUE((void *)(intptr_t)now_us()), RD_KAFKA_V_END);
                        if (e == RD_KAFKA_RESP_ERR_NO_ERROR)
                                break;
                        if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
                                fprintf(stderr, "rdkafka_load: produce: %s\n",
                                        rd_kafka_err2str(e));
                                return 1;
                        }
                        rd_kafka_poll(rk, 1);
                }
                if ((i & 1023) == 0)
                        rd_kafka_poll(rk, 0);
        }
        while (rd_kafka_outq_len(rk) > 0)
                rd_kafka_poll(rk, 10);
        double seconds = (double)(now_us() - start) / 1e6;
        rd_kafka_destroy(rk);
        printf("{\"records\": %ld, \"bytes\": %.0f, \"seconds\": %.3f, \"errors\": %ld, "
               "\"latency_mean_ms\": %.1f, \"latency_max_ms\": %.1f, \"first_error\": \"%s\"}\n",
               tally.delivered, (double)tally.delivered * (double)size, seconds, tally.errors,
               tally.delivered ? tally.latency_sum_ms / (double)tally.delivered : 0.0,
               tally.latency_max_ms, tally.first_error);
        free(value);
        return tally.errors ? 1 : 0;
}

static int consume(const char *bootstrap, const char *topic, int partitions, long records,
                   int argc, char **argv) {
        char err[512];
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        set(conf, "bootstrap.servers", bootstrap);
        set(conf, "group.id", "rdkafka-load");
        set(conf, "enable.auto.commit", "false");
        apply(conf, argc, argv);
        rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
        if (!rk) {
                fprintf(stderr, "rdkafka_load: %s\n", err);
                return 2;
        }
        rd_kafka_poll_set_consumer(rk);
        rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(partitions);
        for (int p = 0; p < partitions; p++)
                rd_kafka_topic_partition_list_add(list, topic, p)->offset =
                    RD_KAFKA_OFFSET_BEGINNING;
        rd_kafka_assign(rk, list);
        rd_kafka_topic_partition_list_destroy(list);
        long read = 0, errors = 0;
        double bytes = 0;
        int64_t start = 0, idle_since = now_us();
        while (read < records) {
                rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
                if (!m) {
                        /* Nothing for two minutes: the records are not coming. */
                        if (now_us() - idle_since > 120 * 1000000LL)
                                break;
                        continue;
                }
                idle_since = now_us();
                if (m->err) {
                        if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
                                errors++;
                } else {
                        if (!read)
                                start = now_us();
                        read++;
                        bytes += (double)m->len;
                }
                rd_kafka_message_destroy(m);
        }
        double seconds = start ? (double)(now_us() - start) / 1e6 : 0.0;
        rd_kafka_consumer_close(rk);
        rd_kafka_destroy(rk);
        printf("{\"records\": %ld, \"bytes\": %.0f, \"seconds\": %.3f, \"errors\": %ld}\n", read,
               bytes, seconds, errors);
        return read < records || errors ? 1 : 0;
}

int main(int argc, char **argv) {
        if (argc >= 7 && !strcmp(argv[1], "produce"))
                return produce(argv[2], argv[3], atoi(argv[4]), atol(argv[5]),
                               (size_t)atol(argv[6]), argc - 7, argv + 7);
        if (argc >= 6 && !strcmp(argv[1], "consume"))
                return consume(argv[2], argv[3], atoi(argv[4]), atol(argv[5]), argc - 6,
                               argv + 6);
        fprintf(stderr, "usage: rdkafka_load produce <bootstrap> <topic> <partitions> <records> "
                        "<size> [key=value ...]\n"
                        "       rdkafka_load consume <bootstrap> <topic> <partitions> <records> "
                        "[key=value ...]\n");
        return 2;
}
