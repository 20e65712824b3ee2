/** Bundles the web app into dist/webui (app.js, app.css); resolves with that directory. */
export function buildWebUi(): Promise<string>;
