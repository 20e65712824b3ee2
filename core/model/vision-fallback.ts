import { ModelError } from "../errors.js";
import type { ModelCapabilities } from "./capabilities.js";
import type { ChatMessage, ModelClient, ModelRequest, ModelResponse } from "./port.js";

/** Put where an image was when the model cannot take images (the model reads this instead). */
export const IMAGE_NOT_SHOWN = "[image not shown: the model in use does not accept images]";

/** Begins the answer to a message whose images the model could not see (said once per activation). */
export const NO_VISION_NOTICE = "I can't see images with the model I'm using, so I only read your words (your image is saved in your workspace).";

/** True when the request carries at least one image content part. */
export function hasImageParts(messages: readonly ChatMessage[]): boolean {
  return messages.some((m) => m.role === "user" && Array.isArray(m.content) && m.content.some((p) => p.type === "image_url"));
}

/** The messages with every image part replaced by {@link IMAGE_NOT_SHOWN}. */
export function withoutImages(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.map((m) => {
    if (m.role !== "user" || !Array.isArray(m.content) || !m.content.some((p) => p.type === "image_url")) return m;
    return { ...m, content: m.content.map((p) => (p.type === "image_url" ? { type: "text" as const, text: IMAGE_NOT_SHOWN } : p)) };
  });
}

/**
 * Does a failure of a request with images look like the endpoint refusing images? A 4xx other than
 * auth, timeout and rate limits (OpenAI answers 400 "image_url is only supported by certain models";
 * vLLM 400 "… is not a multimodal model"), or any failure whose text names images (llama.cpp
 * answers 500 "image input is not supported"). The caller confirms by sending the request again
 * without the images.
 */
export function mayBeImageRefusal(error: unknown): boolean {
  if (!(error instanceof ModelError)) return false;
  if (error.reason === "rejected") return true;
  return (error.reason === "server" || error.reason === "invalid_response") && /image|vision|multimodal|mmproj/i.test(error.message);
}

/**
 * A `ModelClient` that learns whether the endpoint takes images (see `ModelCapabilities`):
 *
 * - a request with image parts while vision is `unknown`/`yes` is sent as is; success confirms vision;
 * - when it fails in a way that may be a refusal of images, it is sent again with each image replaced
 *   by a short note; if that succeeds, vision is `no` from now on;
 * - while vision is `no`, image parts are replaced before sending.
 *
 * Whenever images were left out, a final text answer begins with {@link NO_VISION_NOTICE}, so the
 * person hears the truth even from a model that would pretend to have seen the picture. Requests
 * without images pass through untouched.
 */
export class VisionFallbackModel implements ModelClient {
  constructor(
    private readonly inner: ModelClient,
    private readonly capabilities: ModelCapabilities,
  ) {}

  get model(): string {
    return this.inner.model;
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    if (!hasImageParts(request.messages)) return this.inner.complete(request);
    if (this.capabilities.vision === "no") return honest(await this.inner.complete({ ...request, messages: withoutImages(request.messages) }));
    let first: unknown;
    try {
      const response = await this.inner.complete(request);
      this.capabilities.visionAccepted();
      return response;
    } catch (error) {
      if (!mayBeImageRefusal(error)) throw error;
      first = error;
    }
    // If the same request fails without the images too, the images were not the problem: report that failure.
    const response = await this.inner.complete({ ...request, messages: withoutImages(request.messages) });
    this.capabilities.visionRefused(first instanceof Error ? first.message : String(first));
    return honest(response);
  }
}

/** Prefixes a final text answer (no tool calls) with the no-vision notice. */
function honest(response: ModelResponse): ModelResponse {
  const text = response.content?.trim();
  if (!text || response.toolCalls.length > 0 || text.startsWith(NO_VISION_NOTICE)) return response;
  return { ...response, content: `${NO_VISION_NOTICE}\n\n${text}` };
}
