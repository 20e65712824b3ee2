/**
 * Settings: every setting Familiar reads, in one zod schema, loaded once from the environment and
 * the FAMILIAR_CONFIG file; a bad value stops the start with every bad key listed. It reads nothing
 * at run time and imports nothing of the runtime.
 */
export { loadConfig, secretValues } from "./load.js";
export { configuredConnectionSchema, listenHost, type Config, type ConfiguredConnection } from "./schema.js";
