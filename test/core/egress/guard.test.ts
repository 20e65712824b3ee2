import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { classifyAddress } from "../../../core/egress/addresses.js";
import { EgressGuard, precheckUrl, type Resolver } from "../../../core/egress/guard.js";
import { EgressDeniedError, EgressFailedError } from "../../../core/egress/errors.js";
import { secretsIn } from "../../../core/log/redaction.js";
import { startServer, type TestServer } from "../sentinel/helpers.js";

// The guard loads undici on its first request; load it before the 500 ms limits below apply.
beforeAll(async () => {
  await import("undici");
});

async function denial(promise: Promise<unknown> | (() => unknown)): Promise<EgressDeniedError> {
  try {
    await (typeof promise === "function" ? promise() : promise);
  } catch (error) {
    if (error instanceof EgressDeniedError) return error;
    throw error;
  }
  throw new Error("expected an EgressDeniedError");
}

describe("classifyAddress", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["192.168.1.10", "private"],
    ["169.254.1.1", "linkLocal"],
    ["100.64.0.1", "carrierGradeNat"],
    ["224.0.0.1", "multicast"],
    ["0.0.0.0", "unspecified"],
    ["255.255.255.255", "broadcast"],
    ["192.0.2.5", "reserved"],
    ["198.51.100.7", "reserved"],
    ["203.0.113.9", "reserved"],
    ["240.0.0.1", "reserved"],
    ["::1", "loopback"],
    ["::", "unspecified"],
    ["fc00::1", "uniqueLocal"],
    ["fd12:3456::1", "uniqueLocal"],
    ["fe80::1", "linkLocal"],
    ["ff02::1", "multicast"],
    ["2001:db8::1", "reserved"],
    ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
    ["::ffff:10.0.0.1", "IPv4-mapped private"],
    ["::7f00:1", "IPv4-compatible"],
    ["::a00:1", "IPv4-compatible"],
    ["64:ff9b::10.0.0.1", "NAT64 private"],
    ["64:ff9b::127.0.0.1", "NAT64 loopback"],
  ])("%s is refused (%s)", (address, range) => {
    expect(classifyAddress(address)).toMatchObject({ public: false, code: "private_address", range });
  });

  it.each(["169.254.169.254", "fd00:ec2::254", "100.100.100.200", "::ffff:169.254.169.254"])("%s is a metadata address", (address) => {
    expect(classifyAddress(address)).toMatchObject({ public: false, code: "metadata_address" });
  });

  it.each(["8.8.8.8", "93.184.216.34", "2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::8.8.8.8"])("%s is public", (address) => {
    expect(classifyAddress(address).public).toBe(true);
  });

  it("refuses ::127.0.0.1 however the library reads the dotted IPv4-compatible form", () => {
    expect(classifyAddress("::127.0.0.1")).toMatchObject({ public: false, code: "private_address" });
  });

  it("refuses garbage (fail closed)", () => {
    expect(classifyAddress("not-an-ip").public).toBe(false);
  });
});

describe("precheckUrl (B1 spellings, before any connection)", () => {
  it.each([
    ["http://169.254.169.254/latest/meta-data/", "metadata_address"],
    ["http://127.0.0.1:8080/", "private_address"],
    ["file:///etc/passwd", "scheme_not_allowed"],
    ["ftp://example.com/x", "scheme_not_allowed"],
    ["javascript:alert(1)", "scheme_not_allowed"],
    ["http://[::ffff:127.0.0.1]/", "private_address"],
    ["http://[::1]:3000/", "private_address"],
    ["http://0x7f.1/", "private_address"],
    ["http://2130706433/", "private_address"],
    ["http://127.1/", "private_address"],
    ["http://0177.0.0.1/", "private_address"],
    ["http://0/", "private_address"],
    ["http://[fd00:ec2::254]/", "metadata_address"],
    ["http://100.100.100.200/", "metadata_address"],
    ["http://[64:ff9b::a00:1]/", "private_address"],
    ["not a url", "invalid_url"],
    ["http://user:pw@example.com/", "invalid_url"],
  ])("%s → %s", async (url, code) => {
    expect((await denial(() => precheckUrl(url))).code).toBe(code);
  });

  it("WHATWG parsing normalizes the spellings to the address they are", async () => {
    expect((await denial(() => precheckUrl("http://0x7f.1/"))).address).toBe("127.0.0.1");
    expect((await denial(() => precheckUrl("http://2130706433/"))).address).toBe("127.0.0.1");
  });

  it("lets an exact allow-listed host:port through, but not another port, and never metadata", async () => {
    const allowed = new Set(["127.0.0.1:8080", "169.254.169.254:80"]);
    expect(precheckUrl("http://127.0.0.1:8080/x", allowed).href).toBe("http://127.0.0.1:8080/x");
    expect((await denial(() => precheckUrl("http://127.0.0.1:8081/", allowed))).code).toBe("private_address");
    expect((await denial(() => precheckUrl("http://169.254.169.254/", allowed))).code).toBe("metadata_address");
  });

  it("public hostnames and addresses pass the precheck", () => {
    expect(precheckUrl("https://example.com/a?b=c").origin).toBe("https://example.com");
    expect(precheckUrl("http://8.8.8.8/").hostname).toBe("8.8.8.8");
  });
});

describe("EgressGuard over real HTTP", () => {
  let server: TestServer;
  let other: TestServer;
  beforeEach(async () => {
    other = await startServer((_req, res) => res.end("other"));
    server = await startServer((req, res) => {
      if (req.path === "/to-loopback") res.writeHead(302, { location: `http://127.0.0.1:${other.port}/secret` }).end();
      else if (req.path === "/to-metadata") res.writeHead(301, { location: "http://169.254.169.254/latest/meta-data/" }).end();
      else if (req.path === "/to-file") res.writeHead(302, { location: "file:///etc/passwd" }).end();
      else if (req.path === "/loop") res.writeHead(302, { location: "/loop" }).end();
      else if (req.path === "/hop") res.writeHead(303, { location: "/final" }).end();
      else if (req.path === "/away") res.writeHead(302, { location: `http://other.test:${other.port}/landing` }).end();
      else if (req.path === "/away-307") res.writeHead(307, { location: `http://other.test:${other.port}/landing` }).end();
      else if (req.path === "/big") res.end("x".repeat(5000));
      else if (req.path === "/slow") setTimeout(() => res.end("late"), 8_000);
      else res.end(`hello ${req.method} ${req.path}`);
    });
  });
  afterEach(async () => {
    await server.close();
    await other.close();
  });

  /** A guard that allows only `public.test:<server port>` (resolved by the fake resolver to 127.0.0.1). */
  function guard(resolve: Resolver = async () => [{ address: "127.0.0.1", family: 4 }], extra: string[] = []) {
    return new EgressGuard({ privateHostsAllowed: [`public.test:${server.port}`, ...extra], resolve, maxBytes: 1000, timeoutMs: 3_000 });
  }

  it("connects to the checked address (pinned): the hostname is never resolved by the system", async () => {
    const response = await guard().request(`http://public.test:${server.port}/page`);
    expect(response.status).toBe(200);
    expect(response.body.toString()).toBe("hello GET /page");
    expect(response.address).toBe("127.0.0.1");
    expect(server.received[0]!.headers.host).toBe(`public.test:${server.port}`);
  });

  it("B1: loopback not on the allow-list is refused and nothing is sent", async () => {
    const err = await denial(guard().request(`http://127.0.0.1:${other.port}/`));
    expect(err).toMatchObject({ code: "private_address", address: "127.0.0.1" });
    expect(other.received).toHaveLength(0);
  });

  it("B1: a redirect to loopback is refused on the hop, before connecting", async () => {
    const err = await denial(guard().request(`http://public.test:${server.port}/to-loopback`));
    expect(err.code).toBe("private_address");
    expect(err.url).toBe(`http://127.0.0.1:${other.port}/secret`);
    expect(other.received).toHaveLength(0);
  });

  it("B1: redirects to metadata and to file: are refused", async () => {
    expect((await denial(guard().request(`http://public.test:${server.port}/to-metadata`))).code).toBe("metadata_address");
    expect((await denial(guard().request(`http://public.test:${server.port}/to-file`))).code).toBe("scheme_not_allowed");
  });

  it("B1: a hostname resolving to a private address is refused; one bad address among good ones is enough", async () => {
    const err = await denial(guard(async () => [{ address: "10.0.0.7", family: 4 }]).check("http://intranet.example/"));
    expect(err).toMatchObject({ code: "private_address", address: "10.0.0.7" });
    const mixed = guard(async () => [{ address: "93.184.216.34", family: 4 }, { address: "::ffff:127.0.0.1", family: 6 }]);
    expect((await denial(mixed.check("http://mixed.example/"))).address).toBe("::ffff:127.0.0.1");
    expect((await denial(guard(async () => [{ address: "169.254.169.254", family: 4 }]).check("http://meta.example/"))).code).toBe("metadata_address");
    expect((await denial(guard(async () => []).check("http://none.example/"))).code).toBe("unresolvable");
    expect((await denial(guard(async () => { throw new Error("ENOTFOUND"); }).check("http://gone.example/"))).code).toBe("unresolvable");
  });

  it("a public resolution passes the check", async () => {
    const target = await guard(async () => [{ address: "93.184.216.34", family: 4 }]).check("https://example.com/");
    expect(target).toMatchObject({ address: "93.184.216.34", family: 4, allowListed: false });
  });

  it("follows allowed redirects (303 becomes GET) and stops after the maximum", async () => {
    const response = await guard().request(`http://public.test:${server.port}/hop`, { method: "POST", body: "x" });
    expect(response.body.toString()).toBe("hello GET /final");
    expect(response.redirects).toEqual([`http://public.test:${server.port}/hop`]);
    expect((await denial(guard().request(`http://public.test:${server.port}/loop`))).code).toBe("too_many_redirects");
    expect(server.received.filter((r) => r.path === "/loop")).toHaveLength(6);
  });

  it("a redirect to another origin is a new action: asked about first, headers never cross, a body never travels on", async () => {
    const g = guard(async () => [{ address: "127.0.0.1", family: 4 }], [`other.test:${other.port}`]);
    const asked: string[] = [];
    const stop = await g.request(`http://public.test:${server.port}/away`, {
      headers: { authorization: "Bearer s3cr3t" },
      beforeCrossOrigin: async (next, from, method) => (asked.push(`${method} ${from.href} -> ${next.href}`), "stop"),
    });
    expect(stop).toMatchObject({ status: 302, stopped: { location: `http://other.test:${other.port}/landing`, reason: "not_granted" } });
    expect(asked).toEqual([`GET http://public.test:${server.port}/away -> http://other.test:${other.port}/landing`]);
    expect(other.received).toHaveLength(0);

    const followed = await g.request(`http://public.test:${server.port}/away`, { headers: { authorization: "Bearer s3cr3t" }, beforeCrossOrigin: async () => "follow" });
    expect(followed.body.toString()).toBe("other");
    expect(other.received).toHaveLength(1);
    expect(other.received[0]!.headers.authorization).toBeUndefined();

    const withBody = await g.request(`http://public.test:${server.port}/away-307`, { method: "POST", body: "private data", beforeCrossOrigin: async () => "follow" });
    expect(withBody).toMatchObject({ status: 307, stopped: { reason: "would_carry_body" } });
    expect(other.received).toHaveLength(1);
  });

  it("outbound check: a vault value (any encoding) is never sent to an unbound origin, also on a redirect hop", async () => {
    const value = "vault-VALUE/42+x";
    const boundOrigin = `http://public.test:${server.port}`;
    const check = (texts: readonly string[], origin: string) => (origin === boundOrigin ? [] : secretsIn(texts.join("\n"), [{ name: "API", value }]).map((s) => s.name!));
    const g = new EgressGuard({ privateHostsAllowed: [`public.test:${server.port}`, `other.test:${other.port}`], resolve: async () => [{ address: "127.0.0.1", family: 4 }], timeoutMs: 3_000, outboundCheck: check });
    // To the bound origin: sent.
    const ok = await g.request(`${boundOrigin}/hello`, { headers: { authorization: `Bearer ${value}` } });
    expect(ok.status).toBe(200);
    // To another origin, in the body, a header or the URL, plain or encoded: refused before connecting.
    for (const init of [
      { url: `http://other.test:${other.port}/x`, body: Buffer.from(value).toString("base64"), method: "POST" },
      { url: `http://other.test:${other.port}/x`, headers: { "x-k": Buffer.from(value).toString("hex") } },
      { url: `http://other.test:${other.port}/x?k=${encodeURIComponent(value)}` },
    ]) {
      await expect(g.request(init.url, { ...(init.method && { method: init.method }), ...(init.body && { body: init.body }), ...(init.headers && { headers: init.headers }) })).rejects.toMatchObject({ code: "secret_unbound_destination" });
    }
    expect(other.received).toHaveLength(0);
  });

  it("a redirect from the bound site that would carry the value to another host is stopped; headers never cross", async () => {
    const value = "vault-VALUE/42+x";
    const boundOrigin = `http://public.test:${server.port}`;
    const echo = await startServer((req, res) => res.writeHead(302, { location: `http://other.test:${other.port}/landing?stolen=${encodeURIComponent(new URL(req.path, "http://x").searchParams.get("k") ?? "")}` }).end());
    try {
      const echoOrigin = `http://public.test:${echo.port}`;
      const check = (texts: readonly string[], origin: string) => (origin === echoOrigin || origin === boundOrigin ? [] : secretsIn(texts.join("\n"), [{ name: "API", value }]).map((s) => s.name!));
      const g = new EgressGuard({ privateHostsAllowed: [`public.test:${echo.port}`, `other.test:${other.port}`], resolve: async () => [{ address: "127.0.0.1", family: 4 }], timeoutMs: 3_000, outboundCheck: check });
      await expect(g.request(`${echoOrigin}/go?k=${encodeURIComponent(value)}`, { beforeCrossOrigin: async () => "follow" })).rejects.toMatchObject({ code: "secret_unbound_destination" });
      expect(echo.received).toHaveLength(1);
      expect(other.received).toHaveLength(0);
    } finally {
      await echo.close();
    }
  });

  it("enforces the byte and time limits", async () => {
    await expect(guard().request(`http://public.test:${server.port}/big`)).rejects.toMatchObject({ code: "too_large" });
    const started = Date.now();
    const slow = guard().request(`http://public.test:${server.port}/slow`);
    await expect(slow).rejects.toBeInstanceOf(EgressFailedError);
    await expect(slow).rejects.toMatchObject({ code: "timeout" });
    // It gave up before the page answered (8 s), not after.
    expect(Date.now() - started).toBeLessThan(7_500);
  });
});
