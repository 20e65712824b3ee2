import { afterEach, describe, expect, it } from "vitest";
import { ModelCapabilities } from "../../../core/model/capabilities.js";
import { OpenAIModelClient } from "../../../core/model/openai.js";
import { OpenAITranscriber } from "../../../core/model/openai-transcriber.js";
import type { ChatMessage } from "../../../core/model/port.js";
import { TranscriptionUnavailableError } from "../../../core/model/transcription.js";
import { IMAGE_NOT_SHOWN, NO_VISION_NOTICE, VisionFallbackModel } from "../../../core/model/vision-fallback.js";
import { httpError, imageUrls, startFakeOpenAI, text, toolCall, type FakeOpenAIOptions, type FakeOpenAIServer } from "../../fakes/openai-server.js";

/** Learning what the endpoint can do, over real HTTP with the openai SDK against the fake server. */

const withImage: ChatMessage[] = [
  { role: "system", content: "You are Familiar." },
  { role: "user", content: [{ type: "text", text: "what is this?" }, { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }] },
];
const plain: ChatMessage[] = [{ role: "user", content: "hello" }];
const REFUSAL = "Invalid content type. image_url is only supported by certain models.";

describe("VisionFallbackModel", () => {
  const servers: FakeOpenAIServer[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
  });

  async function setup(fallback: FakeOpenAIOptions["fallback"]) {
    const server = await startFakeOpenAI({ ...(fallback && { fallback }) });
    servers.push(server);
    const capabilities = ModelCapabilities.fixed({ model: "fake-model", vision: "auto", transcription: false });
    const model = new VisionFallbackModel(new OpenAIModelClient({ model: "fake-model", baseURL: server.url, maxRetries: 0 }), capabilities);
    return { server, capabilities, model };
  }

  it("sends images to an endpoint that takes them and remembers that it does", async () => {
    const { server, capabilities, model } = await setup(text("A cat."));
    expect((await model.complete({ messages: withImage })).content).toBe("A cat.");
    expect(imageUrls(server.requests[0]!)).toEqual(["data:image/png;base64,AAAA"]);
    expect(capabilities.vision).toBe("yes");
  });

  it("on a refusal, asks again without the images, learns 'no vision' and begins the answer with the truth", async () => {
    const { server, capabilities, model } = await setup((r) => (imageUrls(r).length ? httpError(400, { message: REFUSAL }) : text("From your words: a question.")));
    const answer = await model.complete({ messages: withImage });
    expect(answer.content).toBe(`${NO_VISION_NOTICE}\n\nFrom your words: a question.`);
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]!.messages[1]).toEqual({ role: "user", content: [{ type: "text", text: "what is this?" }, { type: "text", text: IMAGE_NOT_SHOWN }] });
    expect(capabilities.vision).toBe("no");
    // From now on images are left out before sending: one request each, still honest.
    const again = await model.complete({ messages: withImage });
    expect(again.content?.startsWith(NO_VISION_NOTICE)).toBe(true);
    expect(server.requests).toHaveLength(3);
    expect(imageUrls(server.requests[2]!)).toEqual([]);
    // Requests without images are untouched.
    expect((await model.complete({ messages: plain })).content).toBe("From your words: a question.");
  });

  it("does not blame the images when the request fails without them too, and never retries auth failures", async () => {
    const { server, capabilities, model } = await setup(httpError(400, { message: "context_length_exceeded" }));
    await expect(model.complete({ messages: withImage })).rejects.toMatchObject({ code: "MODEL_ERROR", reason: "rejected" });
    expect(server.requests).toHaveLength(2);
    expect(capabilities.vision).toBe("unknown");

    const auth = await setup(httpError(401, { message: "bad key" }));
    await expect(auth.model.complete({ messages: withImage })).rejects.toMatchObject({ reason: "auth" });
    expect(auth.server.requests).toHaveLength(1);
    expect(auth.capabilities.vision).toBe("unknown");
  });

  it("leaves tool calls alone (the notice goes on the final text answer)", async () => {
    const { model, capabilities } = await setup((r) => (imageUrls(r).length ? httpError(400, { message: REFUSAL }) : toolCall("files_list", {})));
    const answer = await model.complete({ messages: withImage });
    expect(answer.toolCalls.map((c) => c.name)).toEqual(["files_list"]);
    expect(answer.content).toBeNull();
    expect(capabilities.vision).toBe("no");
  });
});

describe("OpenAITranscriber", () => {
  let server: FakeOpenAIServer | null = null;
  afterEach(async () => {
    await server?.close();
    server = null;
  });

  it("uploads the audio to /audio/transcriptions (multipart) and returns the text", async () => {
    server = await startFakeOpenAI({ transcribe: (u) => `heard ${u.bytes.length} bytes of ${u.mimeType}` });
    const transcriber = new OpenAITranscriber({ model: "whisper-1", baseURL: server.url, apiKey: "sk-test-secret-123456" });
    const bytes = Buffer.from("OggS-audio");
    expect(await transcriber.transcribe({ bytes, fileName: "voice.ogg", mimeType: "audio/ogg" })).toBe("heard 10 bytes of audio/ogg");
    expect(server.transcriptions[0]).toMatchObject({ model: "whisper-1", fileName: "voice.ogg", bytes });
  });

  it("says the endpoint has no transcription on 404 or an unknown model, and fails other errors plainly without the key", async () => {
    server = await startFakeOpenAI();
    const none = new OpenAITranscriber({ model: "whisper-1", baseURL: server.url, maxRetries: 0 });
    await expect(none.transcribe({ bytes: Buffer.from("x"), fileName: "a.ogg", mimeType: null })).rejects.toBeInstanceOf(TranscriptionUnavailableError);
    await server.close();

    let status = 404;
    server = await startFakeOpenAI({ transcribe: () => ({ status, message: status === 404 ? "The model `whisper-9` does not exist" : "overloaded sk-test-secret-123456" }) });
    const key = "sk-test-secret-123456";
    const transcriber = new OpenAITranscriber({ model: "whisper-9", baseURL: server.url, apiKey: key, maxRetries: 0 });
    await expect(transcriber.transcribe({ bytes: Buffer.from("x"), fileName: "a.ogg", mimeType: null })).rejects.toBeInstanceOf(TranscriptionUnavailableError);
    status = 500;
    const error = (await transcriber.transcribe({ bytes: Buffer.from("x"), fileName: "a.ogg", mimeType: null }).catch((e: unknown) => e)) as Error;
    expect(error).not.toBeInstanceOf(TranscriptionUnavailableError);
    expect(error.message).toMatch(/transcription failed \(500\)/);
    expect(error.message).not.toContain(key);
  });
});
