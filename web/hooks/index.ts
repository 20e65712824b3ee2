/**
 * Inbound webhooks: `POST /hooks/:id` with its secret header; the body is stored with the waiting
 * task and resumes it as untrusted data.
 */
export { hooksRouter } from "./routes.js";
