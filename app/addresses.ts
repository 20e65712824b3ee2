import { networkInterfaces } from "node:os";

/** Where people open Familiar, as the start line and the setup page say it. */
export interface Addresses {
  /** The address on this machine, e.g. `http://127.0.0.1:3000` (loopback even when every interface listens). */
  local: string;
  /** The address other devices open: PUBLIC_URL, else this machine's network address when Familiar listens beyond loopback, else null. */
  network: string | null;
  /** The base of links Familiar sends (sign-in, secret forms, webhooks): PUBLIC_URL, else `network`, else `local`. */
  public: string;
  /** Whether Familiar listens on more than loopback. */
  listensBeyondLoopback: boolean;
}

const isLoopbackHost = (host: string) => host === "localhost" || host === "::1" || /^127\./.test(host);
const isWildcard = (host: string) => host === "0.0.0.0" || host === "::";
const bracket = (host: string) => (host.includes(":") ? `[${host}]` : host);

/**
 * The addresses of a server listening on `host`:`port`. With a wildcard host (`0.0.0.0`, `::`) the
 * local address is loopback and the network address is the first non-internal IPv4 address of
 * this machine (what a phone on the same Wi-Fi opens); `interfaces` is injectable for tests.
 */
export function addressesOf(host: string, port: number, publicUrl: string | undefined, interfaces = networkInterfaces()): Addresses {
  const local = `http://${isWildcard(host) ? "127.0.0.1" : bracket(host)}:${port}`;
  const beyond = !isLoopbackHost(host);
  let network: string | null = null;
  if (publicUrl) network = publicUrl.replace(/\/$/, "");
  else if (isWildcard(host)) {
    const ipv4 = Object.values(interfaces)
      .flat()
      .find((a) => a !== undefined && a.family === "IPv4" && !a.internal);
    network = ipv4 ? `http://${ipv4.address}:${port}` : null;
  } else if (beyond) network = local;
  return { local, network, public: network ?? local, listensBeyondLoopback: beyond };
}

/**
 * The start line a person reads on the console, e.g. "Familiar is running. Open
 * http://127.0.0.1:3000 in your browser to chat." plus where other devices open it, and the next
 * step when no model is chosen yet.
 */
export function startLine(addresses: Addresses, modelConfigured: boolean, allowRemote: boolean): string {
  const lines = [`Familiar is running. Open ${addresses.local} in your browser${modelConfigured ? " to chat" : " to set it up"}.`];
  if (allowRemote && addresses.network) lines.push(`Other devices (a phone on the same network) open ${addresses.network} and sign in.`);
  else if (allowRemote) lines.push("Other devices may sign in, but this machine has no network address Familiar could name: set PUBLIC_URL to the address they open.");
  else lines.push("Only this machine can open it; to use it from your phone, start with LOCAL_CHAT_ALLOW_REMOTE=true (see README, The web app).");
  if (!modelConfigured) lines.push("No language model is set yet: the setup page asks for one.");
  return lines.join("\n");
}
