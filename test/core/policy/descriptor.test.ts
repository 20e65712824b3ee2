import { describe, expect, it } from "vitest";
import { webTools } from "../../../connectors/web/index.js";
import { describeAction, descriptorKey, normaliseFilePath } from "../../../core/policy/descriptor.js";
import { EgressGuard } from "../../../core/egress/guard.js";
import { describePattern, patternFor } from "../../../core/policy/patterns.js";
import type { ToolDefinition } from "../../../core/tools/tool.js";
import { workspaceTools } from "../../../sandbox/workspace/tools.js";

const egress = new EgressGuard();
const fetchTool = webTools(egress).find((t) => t.name === "http_fetch")!;
const requestTool = webTools(egress).find((t) => t.name === "http_request")!;
const writeTool = workspaceTools("/tmp/none").find((t) => t.name === "files_write")!;
const describe_ = (tool: ToolDefinition, args: unknown) => describeAction(tool, tool.policy!, args, egress);

describe("describeAction", () => {
  it("derives method, normalised destination and digest from the validated arguments", () => {
    const a = describe_(requestTool, { url: "HTTPS://API.Example.COM:443/notes/./x/../", method: "post", body: '{"a":1}' });
    expect(a).toMatchObject({ tool: "http_request", capability: "web.request", access: "write", method: "POST" });
    expect(a.targets).toEqual([{ kind: "url", scheme: "https", host: "api.example.com", port: 443, path: "/notes/", href: "https://api.example.com/notes/" }]);
    expect(a.digest).toMatch(/^[0-9a-f]{64}$/);
    // Spelling variants of the same request are the same action.
    const b = describe_(requestTool, { url: "https://api.example.com/notes/", method: "POST", body: '{"a":1}' });
    expect(descriptorKey(a)).toBe(descriptorKey(b));
  });

  it("anything that shapes the effect changes the digest: body, query, header values, header set", () => {
    const base = { url: "https://api.example.com/notes", method: "POST", body: "x", headers: { "Content-Type": "text/plain" } };
    const key = (over: object) => describe_(requestTool, { ...base, ...over }).digest;
    const d0 = key({});
    expect(key({ body: "y" })).not.toBe(d0);
    expect(key({ url: "https://api.example.com/notes?leak=1" })).not.toBe(d0);
    expect(key({ headers: { "Content-Type": "text/html" } })).not.toBe(d0);
    expect(key({ headers: { "Content-Type": "text/plain", "X-Extra": "1" } })).not.toBe(d0);
    // Header names are case-insensitive (HTTP), so only their spelling differs here.
    expect(key({ headers: { "content-type": "text/plain" } })).toBe(d0);
    // A secret is referenced, never valued, in the digest: the reference name is part of it.
    expect(key({ headers: { Authorization: "{{secret:A}}" } })).not.toBe(key({ headers: { Authorization: "{{secret:B}}" } }));
  });

  it("IDN hosts become punycode; ports are filled in; the fragment is no part of the action", () => {
    const a = describe_(fetchTool, { url: "https://аpple.com/#frag" });
    expect(a.targets[0]).toMatchObject({ host: "xn--pple-43d.com", port: 443, path: "/", href: "https://xn--pple-43d.com/" });
    expect(describe_(fetchTool, { url: "http://news.example/" }).targets[0]).toMatchObject({ scheme: "http", port: 80 });
    expect(describe_(fetchTool, { url: "https://news.example/a#x" }).digest).toBe(describe_(fetchTool, { url: "https://news.example/a" }).digest);
  });

  it("blocked destinations stay blocked descriptors (and can never be granted)", () => {
    const a = describe_(fetchTool, { url: "file:///etc/passwd" });
    expect(a.targets[0]).toMatchObject({ kind: "blocked", code: "scheme_not_allowed" });
    expect(patternFor(a, "exact")).toBeNull();
  });

  it("files are named by their normalised path", () => {
    expect(normaliseFilePath("./notes/../a.txt")).toBe("a.txt");
    expect(normaliseFilePath("dir\\sub\\f.md")).toBe("dir/sub/f.md");
    const a = describe_(writeTool, { path: "./docs/../notes.txt", content: "hi" });
    expect(a).toMatchObject({ method: "WRITE", targets: [{ kind: "file", path: "notes.txt" }] });
    expect(describe_(writeTool, { path: "notes.txt", content: "other" }).digest).not.toBe(a.digest);
  });

  it("the card states each pattern in words", () => {
    const post = describe_(requestTool, { url: "https://api.example.com/notes", method: "POST", body: "x" });
    expect(describePattern(patternFor(post, "payload")!)).toBe("POST requests to api.example.com/notes (any body or query)");
    const get = describe_(fetchTool, { url: "https://news.example/today" });
    expect(describePattern(patternFor(get, "payload")!)).toBe("GET anything on news.example");
    const write = describe_(writeTool, { path: "notes.txt", content: "x" });
    expect(describePattern(patternFor(write, "payload")!)).toBe("WRITE to the file notes.txt (any content)");
    expect(describePattern(patternFor(get, "exact")!)).toMatch(/^exactly this GET/);
  });
});
