// Attacker for the workspace race tests: swaps names inside the workspace as fast as it can until
// killed (or after 120 s). argv: mode, workspace root, outside dir.
const fs = require("node:fs");
const path = require("node:path");
const [mode, ws, outside] = process.argv.slice(2);
const deadline = Date.now() + 120_000;
const quiet = (fn) => {
  try {
    fn();
  } catch {}
};
process.send?.("ready");
while (Date.now() < deadline) {
  if (mode === "dir") {
    // ws/dir: a real folder one moment, a symlink to the outside folder the next.
    quiet(() => fs.renameSync(path.join(ws, "dir"), path.join(ws, "dir.real")));
    quiet(() => fs.symlinkSync(outside, path.join(ws, "dir")));
    quiet(() => fs.unlinkSync(path.join(ws, "dir")));
    quiet(() => fs.renameSync(path.join(ws, "dir.real"), path.join(ws, "dir")));
  } else if (mode === "file") {
    // ws/f: a regular file one moment, a symlink to the outside file the next.
    quiet(() => fs.renameSync(path.join(ws, "f"), path.join(ws, "f.real")));
    quiet(() => fs.symlinkSync(path.join(outside, "f"), path.join(ws, "f")));
    quiet(() => fs.unlinkSync(path.join(ws, "f")));
    quiet(() => fs.renameSync(path.join(ws, "f.real"), path.join(ws, "f")));
  } else if (mode === "hardlink") {
    // ws/h: a regular file one moment, a hardlink of the outside file the next.
    quiet(() => fs.renameSync(path.join(ws, "h"), path.join(ws, "h.real")));
    quiet(() => fs.linkSync(path.join(outside, "f"), path.join(ws, "h")));
    quiet(() => fs.unlinkSync(path.join(ws, "h")));
    quiet(() => fs.renameSync(path.join(ws, "h.real"), path.join(ws, "h")));
  } else if (mode === "tmp") {
    // Plant symlinks to outside files at every name in the write folder that is not ours.
    for (const name of fs.readdirSync(path.join(ws, "w"))) {
      if (name === "out.txt") {
        quiet(() => fs.unlinkSync(path.join(ws, "w", name)));
        quiet(() => fs.symlinkSync(path.join(outside, "victim"), path.join(ws, "w", name)));
      } else if (name.endsWith(".tmp")) {
        quiet(() => fs.unlinkSync(path.join(ws, "w", name)));
        quiet(() => fs.symlinkSync(path.join(outside, "victim"), path.join(ws, "w", name)));
      }
    }
    quiet(() => fs.renameSync(path.join(ws, "w"), path.join(ws, "w.real")));
    quiet(() => fs.symlinkSync(outside, path.join(ws, "w")));
    quiet(() => fs.unlinkSync(path.join(ws, "w")));
    quiet(() => fs.renameSync(path.join(ws, "w.real"), path.join(ws, "w")));
  }
}
