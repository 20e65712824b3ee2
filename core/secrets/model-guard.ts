/**
 * The model boundary of the vault: every request to the model and every answer from it passes
 * through the secret scrubber (vault values of every person and the configured keys, in every
 * encoding — scrub.ts), so a secret value never reaches the model's context even if something
 * upstream missed it, and a value the model writes itself becomes its `{{secret:NAME}}` reference
 * (which Sentinel then substitutes only for a bound destination of the acting person).
 */
import type { ModelClient, ModelRequest, ModelResponse } from "../model/index.js";
import { scrubDeep } from "../log/index.js";

/** Wraps a model client; `scrub` replaces secret values in a text (e.g. `SecretVault.scrub` + configured keys). */
export class SecretScrubbingModel implements ModelClient {
  constructor(
    private readonly inner: ModelClient,
    private readonly scrub: (text: string) => string,
  ) {}

  get model(): string {
    return this.inner.model;
  }

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const response = await this.inner.complete({ ...request, messages: scrubDeep(request.messages, this.scrub) });
    return scrubDeep(response, this.scrub);
  }
}
