import { BlockList, isIP } from 'node:net';

/**
 * Which peers' `X-Forwarded-For`, `-Host` and `-Proto` are believed: none (false), the nearest `n`
 * proxies, or those at the listed addresses and ranges (IPs, CIDRs, or proxy-addr's names
 * `loopback`, `linklocal`, `uniquelocal`). Never "every hop": then any client could choose the
 * address the rate limit counts and the host links are built on.
 */
export type TrustProxy = false | number | readonly string[];

export const NAMED_RANGES = ['loopback', 'linklocal', 'uniquelocal'];

/** The ranges proxy-addr's names stand for: where a proxy in front of this server connects from. */
const PRIVATE_NETWORKS = new BlockList();
for (const [network, prefix, family] of [
  ['127.0.0.0', 8, 'ipv4'],
  ['10.0.0.0', 8, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['::1', 128, 'ipv6'],
  ['fc00::', 7, 'ipv6'],
  ['fe80::', 10, 'ipv6'],
] as const) {
  PRIVATE_NETWORKS.addSubnet(network, prefix, family);
}

const isPrivateAddress = (address: string | undefined): boolean => {
  const family = address === undefined ? 0 : isIP(address);
  return family !== 0 && PRIVATE_NETWORKS.check(address!, family === 6 ? 'ipv6' : 'ipv4');
};

/** Whether an entry of an address list is one proxy-addr (and so Fastify) takes: an IP, a CIDR or a named range. */
export function isProxyAddress(entry: string): boolean {
  if (NAMED_RANGES.includes(entry)) return true;
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address!);
  if (family === 0 || rest.length > 0) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 6 ? 128 : 32));
}

type TrustFunction = (address: string, hop: number) => boolean;

/**
 * Fastify's `trustProxy` for a setting. A hop count trusts the nearest `n` proxies, the nearest one
 * only when it connects from a loopback or private address: Fastify itself no longer takes a bare
 * count, since a client that reaches the server directly would then be believed too.
 */
export function fastifyTrustProxy(trust: TrustProxy): false | string[] | TrustFunction {
  if (trust === false || trust === 0) return false;
  if (typeof trust === 'number') return (address, hop) => hop < trust && (hop > 0 || isPrivateAddress(address));
  return [...trust];
}
