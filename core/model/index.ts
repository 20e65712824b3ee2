/**
 * The model: the `ModelClient` port (Chat Completions with tools), its OpenAI-compatible client,
 * the client that switches to whatever the setup page chose, what the endpoint can do (images,
 * transcription) learnt as it goes, and voice-note transcription. It knows nothing of persons,
 * tasks or tools' effects.
 */
export { ModelCapabilities } from "./capabilities.js";
export { ModelInUse } from "./model-in-use.js";
export { EndpointTranscriber, OpenAITranscriber, type ModelEndpoint } from "./openai-transcriber.js";
export { OpenAIModelClient } from "./openai.js";
export type { ChatMessage, ChatTool, ModelClient, ModelRequest, ModelResponse, ModelToolCall } from "./port.js";
export { SwitchableModelClient } from "./switchable.js";
export { TranscriptionUnavailableError, type Transcriber } from "./transcription.js";
export { VisionFallbackModel } from "./vision-fallback.js";
