import fp from 'fastify-plugin';
import underPressure from '@fastify/under-pressure';
import { ServiceBusy } from '../../problem.ts';
import { isOperationalTarget } from '../../operational.ts';

/** How often the delay is measured, by default (under-pressure's own default). */
const SAMPLE_INTERVAL_MS = 1000;
/** What a shed request is told to wait: a few samples, for the lag to have passed. */
const SHED_RETRY_AFTER_SECONDS = 5;

export interface LoadSheddingOptions {
  /** Mean event-loop delay (ms) past which requests are shed; 0 turns shedding off. */
  maxEventLoopDelayMs: number;
  /** How often the delay is measured (tests shorten it). */
  sampleIntervalMs?: number;
}

/**
 * When the event loop lags, requests are answered at once with a 503 problem (Retry-After,
 * no-store) instead of being worked on, so the lag passes. Health probes and metrics are never shed:
 * the process is alive and should not be restarted for being busy, and its metrics say why.
 */
export default fp<LoadSheddingOptions>(
  async (app, { maxEventLoopDelayMs, sampleIntervalMs = SAMPLE_INTERVAL_MS }) => {
    if (maxEventLoopDelayMs <= 0) return;
    await app.register(underPressure, {
      maxEventLoopDelay: maxEventLoopDelayMs,
      sampleInterval: sampleIntervalMs,
      // A resolved promise lets the request through; a rejected one is answered by the error handler.
      pressureHandler: async (request) => {
        if (isOperationalTarget(request.url)) return;
        throw new ServiceBusy(`The server is overloaded and sheds requests until it catches up. Try again in ${SHED_RETRY_AFTER_SECONDS} s.`, SHED_RETRY_AFTER_SECONDS);
      },
    });
  },
  { name: 'load-shedding' },
);
