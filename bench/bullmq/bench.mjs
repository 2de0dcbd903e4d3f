// BullMQ side of the trafikey benchmark harness (go run ./bench).
//
// Usage: node bench.mjs '<workload JSON>'
//
// The Go harness passes one workload as a JSON argument:
//
//   {"addr":"127.0.0.1:6379","queue":"bench","kind":"add|batch|process|steady|flat",
//    "jobs":100000,"payload":64,"producers":50,"batch":100,"concurrency":100,"rate":2000,
//    "warmup":1000}
//
// The script connects, does the unmeasured setup (for "process": adds the
// jobs with addBulk; for "steady" and "flat": starts the worker and runs
// `warmup` jobs through it), prints {"ready":true} on one line and waits for
// a line on stdin. Then it runs the measured part and prints one JSON result line:
//
//   {"ok":true,"added":N,"waiting":N,"processed":N,"elapsed_ns":…,"client_cpu_us":…,
//    "lat_us":{"n":…,"p50":…,"p90":…,"p99":…,"max":…}}
//
// or {"ok":false,"error":"…"} and a non-zero exit status.
//
// Latency is measured from a timestamp written into the payload just before
// Queue.add to the Worker's 'completed' event (the job moved to completed),
// both read from this process's monotonic clock.

import { Queue, Worker } from 'bullmq';
import { createInterface } from 'node:readline';

const w = JSON.parse(process.argv[2] ?? '{}');
const [host, portText] = String(w.addr ?? '127.0.0.1:6379').split(':');
const connection = { host, port: Number(portText), maxRetriesPerRequest: null };
const queueName = w.queue ?? 'bench';
const jobs = Number(w.jobs ?? 1000);
const payloadSize = Math.max(Number(w.payload ?? 64), 20);
const producers = Math.max(Number(w.producers ?? 50), 1);
const batchSize = Math.max(Number(w.batch ?? 100), 1);
const concurrency = Math.max(Number(w.concurrency ?? 100), 1);
const rate = Number(w.rate ?? 0);

const origin = process.hrtime.bigint();
const nowNs = () => Number(process.hrtime.bigint() - origin);

// A payload of exactly payloadSize bytes: a 20-digit timestamp, then padding.
const pad = 'x'.repeat(payloadSize - 20);
const stamp = () => String(nowNs()).padStart(20, '0') + pad;
const stampOf = (p) => Number(p.slice(0, 20));

const out = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');

function waitForGo() {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: process.stdin });
    rl.once('line', () => {
      resolve();
      rl.close();
    });
    rl.once('close', () => reject(new Error('stdin closed before go')));
  });
}

function summary(lat) {
  if (lat.length === 0) return { n: 0, p50: 0, p90: 0, p99: 0, max: 0 };
  const a = Float64Array.from(lat).sort();
  const q = (f) => a[Math.min(a.length - 1, Math.ceil(f * a.length) - 1)] / 1000;
  return { n: a.length, p50: q(0.5), p90: q(0.9), p99: q(0.99), max: a[a.length - 1] / 1000 };
}

// Concurrent producers over a shared counter; next() hands out job indexes.
async function produce(n, parallel, addOne) {
  let next = 0;
  const loops = [];
  for (let i = 0; i < parallel; i++) {
    loops.push((async () => {
      for (;;) {
        const k = next++;
        if (k >= n) return;
        await addOne(k);
      }
    })());
  }
  await Promise.all(loops);
}

async function main() {
  const queue = new Queue(queueName, { connection });
  await queue.waitUntilReady();

  let lat = [];
  let measuring = false;
  let processed = 0;
  let worker = null;
  let failure = null;
  let waiter = null; // { count, resolve, reject }: resolved when processed reaches count
  const settle = () => {
    if (!waiter) return;
    if (failure) waiter.reject(failure);
    else if (processed >= waiter.count) waiter.resolve();
    else return;
    waiter = null;
  };
  const waitProcessed = (count) =>
    new Promise((resolve, reject) => {
      waiter = { count, resolve, reject };
      settle();
    });
  const startWorker = async () => {
    worker = new Worker(
      queueName,
      async () => {},
      {
        connection,
        concurrency,
        autorun: false,
        removeOnComplete: { count: 0 },
        removeOnFail: { count: 1000 },
      },
    );
    // Emitted once the job is moved to completed.
    worker.on('completed', (job) => {
      if (measuring) lat.push(nowNs() - stampOf(job.data.p));
      processed++;
      settle();
    });
    worker.on('failed', (job, err) => {
      failure = failure ?? new Error(`job ${job?.id} failed: ${err?.message}`);
      settle();
    });
    worker.on('error', (err) => {
      failure = failure ?? err;
      settle();
    });
    await worker.waitUntilReady();
  };

  if (w.kind === 'process') {
    // Unmeasured: the jobs are in the queue before the worker starts.
    for (let i = 0; i < jobs; i += 1000) {
      const n = Math.min(1000, jobs - i);
      await queue.addBulk(Array.from({ length: n }, () => ({ name: 'bench', data: { p: stamp() } })));
    }
    await startWorker();
  }
  if (w.kind === 'steady' || w.kind === 'flat') {
    // Warm-up: the worker runs and a few jobs take the measured path
    // (connections, scripts, JIT), then the counts start over.
    await startWorker();
    worker.run().catch(() => {});
    const warm = Math.max(1, Number(w.warmup ?? 0));
    await produce(warm, producers, () => queue.add('bench', { p: stamp() }));
    await waitProcessed(warm);
    processed = 0;
    lat = [];
    measuring = true;
  }

  out({ ready: true });
  await waitForGo();

  const cpu0 = process.cpuUsage();
  const t0 = nowNs();
  let added = 0;
  switch (w.kind) {
    case 'add':
      await produce(jobs, producers, async () => {
        await queue.add('bench', { p: stamp() });
        added++;
      });
      break;
    case 'batch': {
      const batches = Math.ceil(jobs / batchSize);
      await produce(batches, producers, async (b) => {
        const n = Math.min(batchSize, jobs - b * batchSize);
        await queue.addBulk(Array.from({ length: n }, () => ({ name: 'bench', data: { p: stamp() } })));
        added += n;
      });
      break;
    }
    case 'process':
      added = jobs;
      worker.run().catch(() => {});
      await waitProcessed(jobs);
      break;
    case 'steady':
    case 'flat': {
      const interval = w.kind === 'steady' && rate > 0 ? 1e9 / rate : 0;
      await produce(jobs, producers, async (k) => {
        if (interval > 0) {
          const due = t0 + k * interval;
          const wait = (due - nowNs()) / 1e6;
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        }
        await queue.add('bench', { p: stamp() });
        added++;
      });
      await waitProcessed(jobs);
      break;
    }
    default:
      throw new Error(`unknown workload kind ${w.kind}`);
  }
  const elapsed = nowNs() - t0;
  const cpu = process.cpuUsage(cpu0);

  const waiting = w.kind === 'add' || w.kind === 'batch' ? await queue.getWaitingCount() : 0;
  if (worker) await worker.close();
  await queue.close();
  out({
    ok: true,
    added,
    waiting,
    processed: w.kind === 'add' || w.kind === 'batch' ? 0 : processed,
    elapsed_ns: elapsed,
    client_cpu_us: cpu.user + cpu.system,
    lat_us: summary(lat),
  });
}

main().then(
  () => process.exit(0),
  (err) => {
    out({ ok: false, error: String(err?.stack ?? err) });
    process.exit(1);
  },
);
