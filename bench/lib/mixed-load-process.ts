/**
 * The mixed load of bench/faults.ts as a process of its own (for bench/fairness.ts, whose probes
 * must not share a thread with the load): reads its options as JSON from the file named by its
 * argument, runs the load, and prints the MixedLoadResult as JSON on stdout.
 *
 *   node bench/lib/mixed-load-process.ts <options.json>
 *   options: { origin, samples, connections, rampSeconds, seconds, acceptEncoding }
 */
import { readFileSync } from 'node:fs';
import { mixedWorkload, startMixedLoad } from './mixed-load.ts';
import type { Samples } from './http-scenarios.ts';

interface Options {
  origin: string;
  samples: Samples;
  connections: number;
  rampSeconds: number;
  seconds: number;
  acceptEncoding: string;
}

const options = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Options;
const load = startMixedLoad({
  origin: options.origin,
  workload: mixedWorkload(options.samples),
  connections: options.connections,
  rampSeconds: options.rampSeconds,
  seconds: options.rampSeconds + options.seconds,
  acceptEncoding: options.acceptEncoding,
});
process.stdout.write(`${JSON.stringify(await load.done)}\n`);
