import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError, ModelError } from "../../core/errors.js";
import { OpenAIModelClient, PLACEHOLDER_API_KEY } from "../../core/model/openai.js";
import type { ChatTool } from "../../core/model/port.js";
import { hang, httpError, startFakeOpenAI, text, toolCall, type FakeOpenAIServer } from "../fakes/openai-server.js";

const API_KEY = "sk-test-0123456789abcdefSECRET";
const weatherTool: ChatTool = {
  type: "function",
  function: { name: "get_weather", description: "Weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
};

let server: FakeOpenAIServer;

beforeEach(async () => {
  server = await startFakeOpenAI();
});
afterEach(async () => {
  await server.close();
});

function client(options: { apiKey?: string; maxRetries?: number; timeout?: number; settingsFrom?: "environment" | "page" } = {}): OpenAIModelClient {
  return new OpenAIModelClient({ model: "fake-model", baseURL: server.url, apiKey: API_KEY, maxRetries: 2, ...options });
}

async function failure(promise: Promise<unknown>): Promise<ModelError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ModelError);
  return error as ModelError;
}

describe("OpenAIModelClient", () => {
  it("returns the text answer and sends only the fields the request asks for", async () => {
    server.push(text("Hello there."));
    const answer = await client().complete({ messages: [{ role: "user", content: "hi" }] });

    expect(answer).toMatchObject({ content: "Hello there.", toolCalls: [], finishReason: "stop" });
    expect(answer.usage?.promptTokens).toBeGreaterThan(0);
    const body = server.requests[0]!.body as unknown as Record<string, unknown>;
    expect(body.model).toBe("fake-model");
    expect(Object.keys(body).sort()).toEqual(["messages", "model"]);
    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${API_KEY}`);
  });

  it("sends tools, response_format, temperature and max_tokens when asked", async () => {
    server.push(text("{}"));
    await client().complete({ messages: [{ role: "user", content: "x" }], tools: [weatherTool], json: true, temperature: 0.2, maxTokens: 50 });

    const body = server.requests[0]!.body as unknown as Record<string, unknown>;
    expect(body.tools).toEqual([weatherTool]);
    expect(body.response_format).toEqual({ type: "json_object" });
    expect(body.temperature).toBe(0.2);
    expect(body.max_tokens).toBe(50);
    expect(body).not.toHaveProperty("max_completion_tokens");
  });

  it("returns tool calls with the raw argument text, even when it is not JSON", async () => {
    server.push(toolCall("get_weather", "{city: Oslo", "call_a"));
    const answer = await client().complete({ messages: [{ role: "user", content: "weather?" }], tools: [weatherTool] });

    expect(answer.content).toBeNull();
    expect(answer.toolCalls).toEqual([{ id: "call_a", name: "get_weather", arguments: "{city: Oslo" }]);
    expect(answer.finishReason).toBe("tool_calls");
  });

  it("uses a placeholder key when only a base URL is configured", async () => {
    const local = new OpenAIModelClient({ model: "fake-model", baseURL: server.url });
    await local.complete({ messages: [{ role: "user", content: "hi" }] });
    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${PLACEHOLDER_API_KEY}`);
  });

  it("refuses to start without a key or a base URL", () => {
    expect(() => new OpenAIModelClient({ model: "gpt-4o-mini" })).toThrow(ConfigError);
  });

  it("retries a 429 after the retry-after the server asked for, then succeeds", async () => {
    server.push(httpError(429, { retryAfter: 0 }), text("after the rate limit"));
    const answer = await client().complete({ messages: [{ role: "user", content: "hi" }] });

    expect(answer.content).toBe("after the rate limit");
    expect(server.requests).toHaveLength(2);
  });

  it("retries a 500 with its own backoff, then succeeds", async () => {
    server.push(httpError(500), text("recovered"));
    const answer = await client().complete({ messages: [{ role: "user", content: "hi" }] });

    expect(answer.content).toBe("recovered");
    expect(server.requests).toHaveLength(2);
  });

  it("throws ModelError (server) when 5xx outlasts the retries", async () => {
    server.push(httpError(503, { retryAfter: 0 }), httpError(503, { retryAfter: 0 }), text("too late"));
    const error = await failure(client({ maxRetries: 1 }).complete({ messages: [{ role: "user", content: "hi" }] }));

    expect(error).toMatchObject({ code: "MODEL_ERROR", reason: "server", status: 503 });
    expect(server.requests).toHaveLength(2);
    expect(server.pending).toBe(1);
  });

  it("throws ModelError (auth) without the API key in its message when the key is rejected", async () => {
    await server.close();
    server = await startFakeOpenAI({ apiKey: "sk-the-right-key-000000" });
    const error = await failure(client().complete({ messages: [{ role: "user", content: "hi" }] }));

    expect(error).toMatchObject({ reason: "auth", status: 401 });
    expect(server.requests).toHaveLength(1); // 401 is not retried
    expect(error.message).toContain("401");
    expect(error.message).not.toContain(API_KEY);
    expect(error.message).not.toContain("0123456789abcdef");
    expect(JSON.stringify(error)).not.toContain(API_KEY);
    expect(error.cause).toBeUndefined();
  });

  it("names the variable only when the settings came from the environment, else the setup page", async () => {
    await server.close();
    server = await startFakeOpenAI({ apiKey: "sk-the-right-key-000000" });
    const fromEnv = await failure(client().complete({ messages: [{ role: "user", content: "hi" }] }));
    expect(fromEnv.message).toContain("OPENAI_API_KEY");
    const fromPage = await failure(client({ settingsFrom: "page" }).complete({ messages: [{ role: "user", content: "hi" }] }));
    expect(fromPage.message).toMatch(/API key entered on this page/);
    expect(fromPage.message).not.toMatch(/OPENAI_/);
  });

  it("throws ModelError (timeout) when the server never answers, after retrying the timeout", async () => {
    server.push(hang(), hang());
    const error = await failure(client({ timeout: 300, maxRetries: 1 }).complete({ messages: [{ role: "user", content: "hi" }] }));

    expect(error).toMatchObject({ reason: "timeout", status: null });
    expect(server.requests).toHaveLength(2);
  });

  it("throws ModelError (aborted) when the caller aborts", async () => {
    server.push(hang());
    const controller = new AbortController();
    const pending = client().complete({ messages: [{ role: "user", content: "hi" }], signal: controller.signal });
    await waitFor(() => server.requests.length === 1);
    controller.abort();
    const error = await failure(pending);

    expect(error.reason).toBe("aborted");
    expect(server.requests).toHaveLength(1);
  });

  it("throws ModelError (invalid_response) for a 200 without choices", async () => {
    server.push({ kind: "raw", status: 200, body: { id: "x", object: "chat.completion", choices: [] } });
    const error = await failure(client().complete({ messages: [{ role: "user", content: "hi" }] }));
    expect(error.reason).toBe("invalid_response");
  });

  it("throws ModelError (connection) when nothing listens", async () => {
    const url = server.url;
    await server.close();
    server = await startFakeOpenAI();
    const dead = new OpenAIModelClient({ model: "m", baseURL: url, apiKey: API_KEY, maxRetries: 0 });
    const error = await failure(dead.complete({ messages: [{ role: "user", content: "hi" }] }));
    expect(error.reason).toBe("connection");
    expect(error.message).not.toContain(API_KEY);
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(condition()).toBe(true);
}
