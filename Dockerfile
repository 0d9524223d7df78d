# floe: a diskless, Kafka wire-compatible broker. Multi-stage: build with the Rust toolchain,
# run on a small Debian image with only CA certificates added.
FROM rust:1-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --bin floe && strip target/release/floe

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* && useradd --system --home /var/lib/floe floe \
    && mkdir -p /var/lib/floe && chown floe /var/lib/floe
COPY --from=build /src/target/release/floe /usr/local/bin/floe
USER floe
# Two malloc arenas: compaction's segment buffers spread over one arena per thread otherwise,
# and resident memory creeps up with fragmentation (scripts/lifecycle_soak.py shows both).
ENV FLOE_DATA_DIR=/var/lib/floe FLOE_KAFKA_ADDR=0.0.0.0:9092 MALLOC_ARENA_MAX=2
EXPOSE 9092
ENTRYPOINT ["floe"]
CMD ["serve"]
