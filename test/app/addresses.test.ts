import { describe, expect, it } from "vitest";
import { addressesOf, startLine } from "../../app/addresses.js";
import { listenHost } from "../../core/config/index.js";
import { loadConfig } from "../../core/config/index.js";

const lan = { eth0: [{ address: "192.168.1.23", family: "IPv4" as const, internal: false, netmask: "255.255.255.0", mac: "00:00:00:00:00:00", cidr: "192.168.1.23/24" }], lo: [{ address: "127.0.0.1", family: "IPv4" as const, internal: true, netmask: "255.0.0.0", mac: "00:00:00:00:00:00", cidr: "127.0.0.1/8" }] };

describe("where other devices reach Familiar", () => {
  it("listens beyond loopback when LOCAL_CHAT_ALLOW_REMOTE is on, unless HOST says otherwise", () => {
    expect(listenHost(loadConfig({}))).toBe("127.0.0.1");
    expect(listenHost(loadConfig({ LOCAL_CHAT_ALLOW_REMOTE: "true" }))).toBe("0.0.0.0");
    expect(listenHost(loadConfig({ LOCAL_CHAT_ALLOW_REMOTE: "true", HOST: "127.0.0.1" }))).toBe("127.0.0.1");
    expect(listenHost(loadConfig({ HOST: "192.168.1.23" }))).toBe("192.168.1.23");
  });

  it("builds links from PUBLIC_URL, else from this machine's network address, never from 0.0.0.0", () => {
    expect(addressesOf("127.0.0.1", 3000, undefined, lan)).toEqual({ local: "http://127.0.0.1:3000", network: null, public: "http://127.0.0.1:3000", listensBeyondLoopback: false });
    expect(addressesOf("0.0.0.0", 3000, undefined, lan)).toEqual({ local: "http://127.0.0.1:3000", network: "http://192.168.1.23:3000", public: "http://192.168.1.23:3000", listensBeyondLoopback: true });
    expect(addressesOf("0.0.0.0", 3000, "https://familiar.example.org/", lan).public).toBe("https://familiar.example.org");
    expect(addressesOf("::", 3001, undefined, {}).network).toBeNull();
  });

  it("says in words where to open it", () => {
    const open = startLine(addressesOf("0.0.0.0", 3000, undefined, lan), false, true);
    expect(open).toContain("Open http://127.0.0.1:3000 in your browser to set it up.");
    expect(open).toContain("open http://192.168.1.23:3000 and sign in");
    expect(open).not.toMatch(/^\{/);
    expect(startLine(addressesOf("127.0.0.1", 3000, undefined, lan), true, false)).toContain("LOCAL_CHAT_ALLOW_REMOTE=true");
  });
});
