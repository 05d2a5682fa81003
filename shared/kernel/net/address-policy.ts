import { BlockList, isIP } from 'node:net';

/** Addresses a fetch of a user-supplied URL must never reach (RFC 6890 special-purpose ranges). */
const blocked = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
  ['2001:db8::', 32],
] as const) {
  blocked.addSubnet(net, bits, 'ipv6');
}

/** Allowlist entries are host names, IPs or CIDRs (for local development and tests). */
export class AddressPolicy {
  private readonly hosts = new Set<string>();
  private readonly allowed = new BlockList();

  constructor(allowlist: string[]) {
    for (const entry of allowlist) {
      const [addr, bits] = entry.split('/');
      const family = isIP(addr ?? '');
      if (family && bits) this.allowed.addSubnet(addr!, Number(bits), family === 6 ? 'ipv6' : 'ipv4');
      else if (family) this.allowed.addAddress(addr!, family === 6 ? 'ipv6' : 'ipv4');
      else this.hosts.add(entry.toLowerCase());
    }
  }

  hostAllowed(host: string): boolean {
    return this.hosts.has(host.toLowerCase());
  }

  /** True when the resolved address may be contacted. IPv4-mapped IPv6 is judged as IPv4. */
  addressAllowed(address: string): boolean {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    const ip = mapped ? mapped[1]! : address;
    const type = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
    if (this.allowed.check(ip, type)) return true;
    return !blocked.check(ip, type);
  }
}
