/** Canonical CIDR ranges: the network address (host bits cleared) and the compact notation. */
import ipaddr from 'ipaddr.js';

function canonicalCidr(range: string): string {
  const text = range.includes('/') ? range : `${range}/${ipaddr.parse(range).kind() === 'ipv4' ? 32 : 128}`;
  const [address, bits] = ipaddr.parseCIDR(text);
  if (address.kind() === 'ipv4') return `${ipaddr.IPv4.networkAddressFromCIDR(text).toString()}/${bits}`;
  const network = ipaddr.IPv6.networkAddressFromCIDR(text);
  return `${network.toRFC5952String()}/${bits}`;
}

/** Parses a comma-separated list, throwing on the first range that is not an IP network. */
export function parseRanges(list: string): string[] {
  const ranges = list
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean)
    .map((r) => {
      try {
        return canonicalCidr(r);
      } catch {
        throw new Error(`EGRESS_RANGES: ${r} is not an IP address or CIDR range`);
      }
    });
  return [...new Set(ranges)];
}
