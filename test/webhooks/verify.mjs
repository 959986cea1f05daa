// Verifies webhook deliveries the way a receiver written in Node.js would, run by
// test/webhooks_test.go:
//
//   node test/webhooks/verify.mjs <deliveries.json>
//
// The file holds [{"secret": "<as registered>", "library_secret": "<string for the library>",
// "headers": {...}, "body_base64": "..."}]. For each delivery:
//   - the Standard Webhooks headers verify with the official npm library (standardwebhooks),
//     given library_secret as docs/webhooks.md says (and, for a secret not in the whsec_<base64>
//     form, given its UTF-8 bytes with format "raw");
//   - X-Service-Signature verifies with node:crypto, keyed with the secret as registered;
//   - a changed body, or the other secret, fails both.
// Prints "ok: ..." lines and exits 0, or prints "FAIL: ..." and exits 1.
import { Webhook } from 'standardwebhooks';
import crypto from 'node:crypto';
import fs from 'node:fs';

function fail(msg) {
  throw new Error(msg);
}

// The X-Service-Signature check of docs/webhooks.md: hex HMAC-SHA256 of the raw body, keyed with
// the registered secret's UTF-8 bytes, compared in constant time.
function serviceSignatureValid(secret, rawBody, header) {
  const want = Buffer.from('sha256=' + crypto.createHmac('sha256', secret).update(rawBody).digest('hex'));
  const got = Buffer.from(header || '');
  return got.length === want.length && crypto.timingSafeEqual(got, want);
}

function libraryVerifies(librarySecret, rawBody, headers) {
  try {
    new Webhook(librarySecret).verify(rawBody, headers);
    return true;
  } catch {
    return false;
  }
}

const [file] = process.argv.slice(2);
if (!file) {
  console.error('usage: node verify.mjs <deliveries.json>');
  process.exit(2);
}

try {
  const deliveries = JSON.parse(fs.readFileSync(file, 'utf8'));
  if (!Array.isArray(deliveries) || deliveries.length === 0) fail('no deliveries to verify');
  for (const [i, d] of deliveries.entries()) {
    const raw = Buffer.from(d.body_base64, 'base64');
    const what = `delivery ${i + 1} (${d.headers['webhook-id']}, secret ${JSON.stringify(d.secret.slice(0, 10))}…)`;

    // The official library returns the parsed body once the signature matches.
    let payload;
    try {
      payload = new Webhook(d.library_secret).verify(raw, d.headers);
    } catch (e) {
      fail(`${what}: standardwebhooks refused it: ${e.message}`);
    }
    if (!payload || typeof payload.event !== 'string' || typeof payload.form_id !== 'string') {
      fail(`${what}: the verified payload is not a delivery body: ${JSON.stringify(payload)}`);
    }
    // docs/webhooks.md's alternative for a secret not in the whsec_<base64> form: its UTF-8 bytes
    // as a raw key.
    if (d.library_secret !== d.secret) {
      try {
        new Webhook(new TextEncoder().encode(d.secret), { format: 'raw' }).verify(raw, d.headers);
      } catch (e) {
        fail(`${what}: standardwebhooks with the raw UTF-8 key refused it: ${e.message}`);
      }
    }
    if (!serviceSignatureValid(d.secret, raw, d.headers['x-service-signature'])) {
      fail(`${what}: X-Service-Signature does not match the HMAC of the body`);
    }

    // And they can fail: one changed byte, or another endpoint's secret.
    const tampered = Buffer.from(raw);
    tampered[tampered.length - 2] ^= 1;
    if (libraryVerifies(d.library_secret, tampered, d.headers)) fail(`${what}: standardwebhooks accepted a changed body`);
    if (serviceSignatureValid(d.secret, tampered, d.headers['x-service-signature'])) fail(`${what}: X-Service-Signature accepted a changed body`);
    const other = deliveries.find((o) => o.secret !== d.secret);
    if (other) {
      if (libraryVerifies(other.library_secret, raw, d.headers)) fail(`${what}: standardwebhooks accepted another secret`);
      if (serviceSignatureValid(other.secret, raw, d.headers['x-service-signature'])) fail(`${what}: X-Service-Signature accepted another secret`);
    }
    console.log(`ok: ${what}: ${payload.event} verified by standardwebhooks and by X-Service-Signature`);
  }
} catch (e) {
  console.log('FAIL: ' + (e?.message || e));
  process.exit(1);
}
