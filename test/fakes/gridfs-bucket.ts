import { Readable, Writable } from "node:stream";
import { ObjectId } from "mongodb";
import type { SessionBucket, SessionFile } from "../../bots/whatsapp/remote-store.js";

/**
 * An in-memory GridFS bucket behind the store's `SessionBucket` port, with the driver's semantics that
 * matter here: a file becomes visible only when its upload stream finishes; `find` returns natural
 * (insertion) order unless sorted; `delete` of an unknown id rejects "File not found for id …".
 * Failures are injected per operation; `failUploadAfterBytes` breaks an upload mid-stream.
 */
export class FakeGridFsBucket implements SessionBucket {
  readonly files: { file: SessionFile; data: Buffer }[] = [];
  /** Ids of uploads that were started but never finished (a real bucket would keep their chunks). */
  readonly partialUploads = new Set<string>();
  fail: Partial<Record<"upload" | "download" | "find" | "delete", Error>> = {};
  failUploadAfterBytes: number | null = null;

  openUploadStream(filename: string, _options?: { metadata?: Record<string, unknown> }): Writable & { readonly id: ObjectId } {
    if (this.fail.upload) throw this.fail.upload;
    const id = new ObjectId();
    const parts: Buffer[] = [];
    let written = 0;
    this.partialUploads.add(id.toHexString());
    const stream = new Writable({
      write: (chunk: Buffer, _encoding, callback) => {
        written += chunk.length;
        if (this.failUploadAfterBytes !== null && written > this.failUploadAfterBytes) return callback(new Error("connection closed during upload"));
        parts.push(chunk);
        callback();
      },
      final: (callback) => {
        const data = Buffer.concat(parts);
        this.files.push({ file: { _id: id, filename, length: data.length, uploadDate: new Date() }, data });
        this.partialUploads.delete(id.toHexString());
        callback();
      },
    });
    return Object.assign(stream, { id });
  }

  openDownloadStream(id: ObjectId): Readable {
    const entry = this.files.find((f) => f.file._id.equals(id));
    const failure = this.fail.download;
    if (failure) {
      // Like a cursor dying mid-file: some bytes, then an error.
      return new Readable({
        read() {
          this.push(Buffer.from("PK\u0003\u0004partial"));
          this.destroy(failure);
        },
      });
    }
    if (!entry) return new Readable({ read() { this.destroy(new Error(`FileNotFound: file ${id.toHexString()} not found`)); } });
    return Readable.from([entry.data]);
  }

  find(filter: { filename: string }, options?: { sort?: Record<string, 1 | -1> }): { toArray(): Promise<SessionFile[]> } {
    return {
      toArray: async () => {
        if (this.fail.find) throw this.fail.find;
        const found = this.files.filter((f) => f.file.filename === filter.filename).map((f) => ({ ...f.file }));
        const keys = Object.entries(options?.sort ?? {});
        return found.sort((a, b) => {
          for (const [key, dir] of keys) {
            const x = key === "_id" ? a._id.toHexString() : key === "uploadDate" ? a.uploadDate.getTime() : 0;
            const y = key === "_id" ? b._id.toHexString() : key === "uploadDate" ? b.uploadDate.getTime() : 0;
            if (x !== y) return (x < y ? -1 : 1) * dir;
          }
          return 0;
        });
      },
    };
  }

  async delete(id: ObjectId): Promise<void> {
    if (this.fail.delete) throw this.fail.delete;
    this.partialUploads.delete(id.toHexString());
    const index = this.files.findIndex((f) => f.file._id.equals(id));
    if (index === -1) throw new Error(`File not found for id ${id.toHexString()}`);
    this.files.splice(index, 1);
  }

  /** The stored bytes of `filename`, oldest first. */
  contents(filename: string): string[] {
    return this.files.filter((f) => f.file.filename === filename).map((f) => f.data.toString("latin1"));
  }
}
