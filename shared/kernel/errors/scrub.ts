/**
 * Removes what a caller must not learn about the machine from a message meant for them: absolute file paths (a
 * worker's temp folder, the install path) and internal network addresses (IPs, host:port). Used where a tool's or
 * library's text becomes part of a stored, public error (failed jobs, their webhooks).
 */
// An absolute POSIX path of two or more segments, at a word start (not the path of a URL: `//host/a` has no match).
const POSIX_PATH = /(^|[\s'"(=:,[])\/(?:[\w.@+~-]+\/)+[\w.@+~-]*/g;
const WINDOWS_PATH = /\b[A-Za-z]:\\(?:[\w.@+~ -]+\\)*[\w.@+~-]*/g;
// IPv4 with an optional port, bracketed IPv6 with a port, and host:port for single-label (internal) hosts.
const IPV4 = /\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?\b/g;
const IPV6_PORT = /\[[0-9a-fA-F:.]+\](?::\d{1,5})?/g;
const HOST_PORT = /\b(?:localhost|[a-z][\w-]*):\d{2,5}\b/g;

export function scrubInternals(text: string): string {
  return text
    .replace(POSIX_PATH, (_m, lead: string) => `${lead}<path>`)
    .replace(WINDOWS_PATH, '<path>')
    .replace(IPV6_PORT, '<address>')
    .replace(IPV4, '<address>')
    .replace(HOST_PORT, '<address>');
}
