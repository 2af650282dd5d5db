#!/usr/bin/env node
// A test OTLP/HTTP receiver on the loopback interface.  Every POSTed body
// is decoded with OpenTelemetry's own generated protobuf code (the
// opentelemetry-proto definitions as compiled into the npm package
// @opentelemetry/otlp-transformer), never with proftrace's idea of the
// format, and written out as one JSON line per request.
//
//   receiver.js --out FILE [--mode MODE] [--tls KEY,CERT]
//
// Prints the port it listens on, then serves until killed.  MODE:
//   ok         answer 200 with an empty ExportTraceServiceResponse
//   503x2      answer 503 (Retry-After: 1) to the first two requests
//   hang       read requests, never answer
//   close      close the connection in the middle of the first request's
//              body, then answer like ok
//   400        answer every request with 400 and a text reason
//
// Each output line: {"n": request number, "status": answer, "path",
// "contentType", "contentEncoding", "ok": decoded, "error": why not,
// "request": the request as toObject gives it, ids in hex, int64s as
// strings}.  JSON bodies (application/json) go through the same
// generated code: ids from hex, then fromObject, verify, and back.
"use strict";
const fs = require("fs");
const http = require("http");
const https = require("https");
const zlib = require("zlib");
const path = require("path");

const root = require(path.join(__dirname, "node_modules", "@opentelemetry",
  "otlp-transformer", "build", "src", "generated", "root.js"));
const Request = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
const Response = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;

const args = {};
for (let i = 2; i < process.argv.length; i += 2)
  args[process.argv[i].replace(/^--/, "")] = process.argv[i + 1];
const mode = args.mode || "ok";
const out = fs.openSync(args.out, "a");
let n = 0;

// OTLP's JSON mapping writes trace and span ids as hex; protobuf's own
// JSON mapping (fromObject) reads bytes as base64.
function hexIdsToBase64(spans) {
  for (const s of spans)
    for (const k of ["traceId", "spanId", "parentSpanId"]) {
      if (s[k] === undefined)
        continue;
      if (!/^[0-9a-f]*$/.test(s[k]) || (s[k].length !== 32 && s[k].length !== 16))
        throw new Error(`${k} '${s[k]}' is not lowercase hex of 8 or 16 bytes`);
      s[k] = Buffer.from(s[k], "hex").toString("base64");
    }
}

function toPlain(msg) {
  return Request.toObject(msg, { longs: String, enums: Number, bytes: Array,
                                 defaults: false, arrays: true });
}

// Ids as hex again, for the checks.
function idsToHex(obj) {
  for (const rs of obj.resourceSpans || [])
    for (const ss of rs.scopeSpans || [])
      for (const s of ss.spans || [])
        for (const k of ["traceId", "spanId", "parentSpanId"])
          if (s[k] !== undefined)
            s[k] = Buffer.from(s[k]).toString("hex");
  return obj;
}

function decode(type, body) {
  if (type === "application/x-protobuf")
    return toPlain(Request.decode(body));
  if (type === "application/json") {
    const obj = JSON.parse(body.toString("utf8"));
    for (const rs of obj.resourceSpans || [])
      for (const ss of rs.scopeSpans || [])
        hexIdsToBase64(ss.spans || []);
    const why = Request.verify(Request.fromObject(obj));
    if (why)
      throw new Error(why);
    // Everything the JSON said must survive the round trip through the
    // generated message types: a misspelt key would vanish here.
    const back = toPlain(Request.decode(Request.encode(Request.fromObject(obj)).finish()));
    return back;
  }
  throw new Error(`unexpected Content-Type '${type}'`);
}

function handle(req, res) {
  const num = ++n;
  const chunks = [];
  let cut = false;
  req.on("data", (c) => {
    chunks.push(c);
    // The first request is cut off: its connection closed, unanswered,
    // and what came of it thrown away, as a receiver that crashed would.
    if (mode === "close" && num === 1 && !cut) {
      cut = true;
      req.socket.destroy();
    }
  });
  req.on("end", () => {
    if (mode === "hang" || cut)
      return;
    const rec = { n: num, path: req.url, method: req.method,
                  contentType: req.headers["content-type"],
                  contentEncoding: req.headers["content-encoding"] || null,
                  headers: req.headers };
    if (mode === "503x2" && num <= 2) {
      rec.status = 503;
      fs.writeSync(out, JSON.stringify(rec) + "\n");
      res.writeHead(503, { "Retry-After": "1", "Content-Type": "text/plain" });
      res.end("busy\n");
      return;
    }
    if (mode === "400") {
      rec.status = 400;
      fs.writeSync(out, JSON.stringify(rec) + "\n");
      res.writeHead(400, { "Content-Type": "text/plain" });
      res.end("no thanks\n");
      return;
    }
    let body = Buffer.concat(chunks);
    try {
      if (rec.contentEncoding === "gzip")
        body = zlib.gunzipSync(body);
      rec.request = idsToHex(decode(rec.contentType, body));
      rec.ok = true;
      rec.status = 200;
    } catch (e) {
      rec.ok = false;
      rec.error = String(e && e.message || e);
      rec.status = 400;
    }
    fs.writeSync(out, JSON.stringify(rec) + "\n");
    res.writeHead(rec.status, { "Content-Type": "application/x-protobuf" });
    res.end(rec.ok ? Buffer.from(Response.encode(Response.create({})).finish()) : "");
  });
}

let server;
if (args.tls) {
  const [key, cert] = args.tls.split(",");
  server = https.createServer({ key: fs.readFileSync(key),
                                cert: fs.readFileSync(cert) }, handle);
} else {
  server = http.createServer(handle);
}
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${server.address().port}\n`);
});
