// kafkajs, a JavaScript implementation that shares no code with librdkafka: admin client,
// an idempotent producer, a consumer group committing offsets, and the group's offsets read
// back through the admin client.
//
// Usage: node kafkajs_smoke.js BOOTSTRAP TOPIC COUNT   (NODE_PATH names where kafkajs is)
const { Kafka, logLevel } = require("kafkajs");

const [bootstrap, topic, countArg] = process.argv.slice(2);
const count = Number(countArg);
const kafka = new Kafka({ clientId: "floe-kafkajs", brokers: [bootstrap], logLevel: logLevel.WARN });

function check(ok, message) {
  if (!ok) {
    throw new Error(message);
  }
}

async function main() {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 3, configEntries: [{ name: "retention.ms", value: "86400000" }] }] });
  const listed = await admin.listTopics();
  check(listed.includes(topic), `topic not listed: ${listed}`);
  const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
  check(metadata.topics[0].partitions.length === 3, "three partitions");
  const configs = await admin.describeConfigs({ resources: [{ type: 2, name: topic }], includeSynonyms: false });
  const retention = configs.resources[0].configEntries.find((e) => e.configName === "retention.ms");
  check(retention && retention.configValue === "86400000", `retention.ms: ${JSON.stringify(retention)}`);
  const cluster = await admin.describeCluster();
  check(cluster.brokers.length >= 1, "brokers");

  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 5 });
  await producer.connect();
  const messages = [];
  for (let i = 0; i < count; i++) {
    messages.push({ key: `k${i}`, value: `v${i}`, partition: i % 3, headers: { n: `${i}` } });
  }
  for (let i = 0; i < messages.length; i += 100) {
    await producer.send({ topic, acks: -1, messages: messages.slice(i, i + 100) });
  }
  await producer.disconnect();

  const groupId = `${topic}-group`;
  const consumer = kafka.consumer({ groupId, sessionTimeoutMs: 10000, heartbeatInterval: 1000 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const seen = new Map();
  let done;
  const finished = new Promise((resolve) => (done = resolve));
  await consumer.run({
    autoCommit: true,
    eachMessage: async ({ partition, message }) => {
      const key = message.key.toString();
      check(message.value.toString() === `v${key.slice(1)}`, `value of ${key}`);
      check(Number(key.slice(1)) % 3 === partition, `${key} on partition ${partition}`);
      seen.set(key, (seen.get(key) || 0) + 1);
      if (seen.size === count) {
        done();
      }
    },
  });
  const timeout = setTimeout(() => done(), 60000);
  await finished;
  clearTimeout(timeout);
  await consumer.commitOffsets([]).catch(() => {});
  await consumer.disconnect();
  check(seen.size === count, `read ${seen.size} of ${count}`);
  check([...seen.values()].every((n) => n === 1), "a record was read twice");

  const offsets = await admin.fetchOffsets({ groupId, topics: [topic] });
  const committed = offsets[0].partitions.reduce((sum, p) => sum + Number(p.offset), 0);
  check(committed === count, `committed offsets sum to ${committed}, not ${count}`);
  const groups = await admin.listGroups();
  check(groups.groups.some((g) => g.groupId === groupId), "group listed");
  const described = await admin.describeGroups([groupId]);
  check(described.groups[0].state === "Empty", `group state ${described.groups[0].state}`);
  await admin.deleteTopics({ topics: [topic] });
  await admin.disconnect();
  console.log(`kafkajs: ${count} records produced, consumed once by a group, offsets committed`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
