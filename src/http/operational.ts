/** Probes for orchestrators and load balancers, outside the versioned API and never cached. */
export const HEALTH_PATHS = ['/healthz', '/readyz'];

/** Where Prometheus reads the metrics (on the main port, or on a port of their own). */
export const METRICS_PATH = '/metrics';

const OPERATIONAL_PATHS = new Set([...HEALTH_PATHS, METRICS_PATH]);

/**
 * Whether a request target is a probe or the metrics: never rate-limited, shed or kept waiting for a
 * turn, so an orchestrator and Prometheus see the process as it is however busy it is.
 */
export function isOperationalTarget(url: string): boolean {
  const mark = url.indexOf('?');
  return OPERATIONAL_PATHS.has(mark === -1 ? url : url.slice(0, mark));
}
