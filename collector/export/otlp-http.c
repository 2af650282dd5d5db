/*
 * Sending batches: one HTTP POST each (libcurl, one connection kept
 * alive), gzip'd, retried on the answers OTLP calls retryable (429, 502,
 * 503, 504) and on connections that fail, with exponential backoff or the
 * receiver's Retry-After, within one deadline for the whole export.  A
 * build must never wait on its tracing backend for longer than that, and
 * never fails because of it: the caller gets -1 and one warning line.
 */
#include <curl/curl.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "base/strbuf.h"
#include "base/util.h"
#include "base/worker.h"
#include "export/otlp.h"
#include "pt-config.h"

#define BACKOFF_FIRST_MS 500
#define BACKOFF_MAX_MS 8000
#define REPLY_KEEP 200          /* bytes of an error reply quoted */
/* A receiver that refuses connections is usually not there at all: a few
 * tries, not the whole deadline, before the build goes on. */
#define CONNECT_TRIES 4
/* One that took the whole timeout twice will not do better a third time
 * (and a build's end waits for it). */
#define TIMEOUT_TRIES 2

struct pt_otlp_sender {
	const struct pt_otlp_opts *o;
	CURL *curl;
	struct curl_slist *headers;
	char errbuf[CURL_ERROR_SIZE];
	struct pt_sb body, reply;
	long retry_after_ms;            /* from the last reply, or -1 */
	/* The deadline counts the time spent waiting on the receiver (and
	 * between retries), not loading the capture or encoding: what is
	 * left of it, and when the current request must end. */
	uint64_t left_ns, deadline;
	int dead;                       /* failed once: send nothing more */
	/* The sending thread: it compresses and posts one batch while the
	 * caller encodes the next.  Under w's lock: pending (the batch being
	 * sent), busy, dead. */
	struct pt_worker w;
	int threaded, busy;
	struct pt_otlp_batch pending;
	unsigned long requests, retries;
	uint64_t bytes;
};

/* The URL as it may be printed: no user:password@, no ?query. */
static void url_for_message(const char *url, struct pt_sb *out)
{
	const char *host = strstr(url, "://");
	const char *at, *end;

	host = host ? host + 3 : url;
	end = host + strcspn(host, "/?#");
	at = memchr(host, '@', (size_t)(end - host));
	pt_sb_add(out, url, (size_t)(host - url));
	pt_sb_add(out, at ? at + 1 : host,
		  strcspn(at ? at + 1 : host, "?#"));
}

static size_t on_reply(char *p, size_t size, size_t n, void *arg)
{
	struct pt_otlp_sender *s = arg;
	size_t len = size * n;

	if (s->reply.len < REPLY_KEEP)
		pt_sb_add(&s->reply, p, len < REPLY_KEEP ? len : REPLY_KEEP);
	return len;
}

static size_t on_header(char *p, size_t size, size_t n, void *arg)
{
	struct pt_otlp_sender *s = arg;
	size_t len = size * n;

	/* Retry-After in seconds; an HTTP date is left to the backoff. */
	if (len > 12 && !strncasecmp(p, "Retry-After:", 12)) {
		char *end;
		long v = strtol(p + 12, &end, 10);

		if (end != p + 12 && v >= 0)
			s->retry_after_ms = v > 3600 ? 3600000 : v * 1000;
	}
	return len;
}

static int send_now(struct pt_otlp_sender *s, const struct pt_otlp_batch *b);

static void *sending(void *arg)
{
	struct pt_otlp_sender *s = arg;
	int rc;

	pt_worker_lock(&s->w);
	for (;;) {
		while (!s->busy && !s->w.quit)
			pt_worker_wait(&s->w);
		if (!s->busy)
			break;
		pt_worker_unlock(&s->w);
		rc = send_now(s, &s->pending);
		pt_worker_lock(&s->w);
		if (rc < 0)
			s->dead = 1;
		s->busy = 0;
		pt_worker_wake(&s->w);
	}
	pt_worker_unlock(&s->w);
	return NULL;
}

int pt_otlp_post(struct pt_otlp_sender *s, struct pt_otlp_batch *b)
{
	struct pt_otlp_batch t;
	int dead;

	if (!s->threaded) {
		if (!s->dead && send_now(s, b) < 0)
			s->dead = 1;
		return s->dead ? -1 : 0;
	}
	pt_worker_lock(&s->w);
	while (s->busy)
		pt_worker_wait(&s->w);
	dead = s->dead;
	if (!dead) {
		/* Hand the buffers over; b gets the sent batch's to reuse. */
		t = s->pending;
		s->pending = *b;
		*b = t;
		s->busy = 1;
		pt_worker_wake(&s->w);
	}
	pt_worker_unlock(&s->w);
	return dead ? -1 : 0;
}

int pt_otlp_sender_wait(struct pt_otlp_sender *s)
{
	int dead;

	if (!s->threaded)
		return s->dead ? -1 : 0;
	pt_worker_lock(&s->w);
	while (s->busy)
		pt_worker_wait(&s->w);
	dead = s->dead;
	pt_worker_unlock(&s->w);
	return dead ? -1 : 0;
}

struct pt_otlp_sender *pt_otlp_sender_new(const struct pt_otlp_opts *o)
{
	struct pt_otlp_sender *s = pt_xcalloc(1, sizeof *s);
	struct pt_sb h = PT_SB_INIT;
	const char *ca = pt_otlp_env("CERTIFICATE");
	size_t i;

	s->o = o;
	pt_sb_init(&s->body);
	pt_sb_init(&s->reply);
	s->pending = (struct pt_otlp_batch)PT_OTLP_BATCH_INIT;
	s->left_ns = (uint64_t)o->deadline_ms * 1000000u;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	s->curl = curl_easy_init();
	if (!s->curl)
		pt_die(1, "cannot start libcurl");
	s->headers = curl_slist_append(NULL, o->proto == PT_OTLP_JSON ?
				       "Content-Type: application/json" :
				       "Content-Type: application/x-protobuf");
	if (o->gzip)
		s->headers = curl_slist_append(s->headers,
					       "Content-Encoding: gzip");
	/* No "Expect: 100-continue": one round trip fewer per batch. */
	s->headers = curl_slist_append(s->headers, "Expect:");
	for (i = 0; i < o->nheaders; i++) {
		pt_sb_reset(&h);
		pt_sb_addf(&h, "%s: %s", o->headers[i].key,
			   o->headers[i].value);
		s->headers = curl_slist_append(s->headers, h.buf);
	}
	/* Wipe the copy that held a header's value. */
	memset(h.buf, 0, h.len);
	pt_sb_release(&h);
	curl_easy_setopt(s->curl, CURLOPT_URL, o->url);
	curl_easy_setopt(s->curl, CURLOPT_POST, 1L);
	curl_easy_setopt(s->curl, CURLOPT_HTTPHEADER, s->headers);
	curl_easy_setopt(s->curl, CURLOPT_USERAGENT, "proftrace/" PT_VERSION);
	curl_easy_setopt(s->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(s->curl, CURLOPT_ERRORBUFFER, s->errbuf);
	curl_easy_setopt(s->curl, CURLOPT_WRITEFUNCTION, on_reply);
	curl_easy_setopt(s->curl, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(s->curl, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(s->curl, CURLOPT_HEADERDATA, s);
	curl_easy_setopt(s->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	if (ca)
		curl_easy_setopt(s->curl, CURLOPT_CAINFO, ca);
	/* Without the thread, batches are sent from the caller's. */
	s->threaded = pt_worker_start(&s->w, sending, s) == 0;
	return s;
}

/* Deflate the three parts into s->body as one gzip member. */
static void gzip_body(struct pt_otlp_sender *s, const struct pt_otlp_batch *b)
{
	const struct pt_sb *part[3] = { &b->head, &b->spans, &b->tail };
	z_stream z;
	int i, rc;

	memset(&z, 0, sizeof z);
	/* Level 1: the network is rarely the bottleneck on the way to a
	 * local collector, the CPU of a CI runner is. */
	if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		pt_die(1, "zlib: cannot start deflate");
	pt_sb_reset(&s->body);
	for (i = 0; i < 3; i++) {
		z.next_in = (unsigned char *)part[i]->buf;
		z.avail_in = (uInt)part[i]->len;
		do {
			pt_sb_grow(&s->body, 65536);
			z.next_out = (unsigned char *)s->body.buf + s->body.len;
			z.avail_out = (uInt)(s->body.alloc - s->body.len - 1);
			rc = deflate(&z, i == 2 ? Z_FINISH : Z_NO_FLUSH);
			s->body.len = (size_t)((char *)z.next_out - s->body.buf);
		} while (z.avail_in || (i == 2 && rc != Z_STREAM_END));
	}
	deflateEnd(&z);
}

static void body_plain(struct pt_otlp_sender *s, const struct pt_otlp_batch *b)
{
	pt_sb_reset(&s->body);
	pt_sb_add(&s->body, b->head.buf, b->head.len);
	pt_sb_add(&s->body, b->spans.buf, b->spans.len);
	pt_sb_add(&s->body, b->tail.buf, b->tail.len);
}

static int retryable_status(long code)
{
	return code == 429 || code == 502 || code == 503 || code == 504;
}

static int retryable_error(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
		return 1;
	default:
		return 0;
	}
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Milliseconds left before the deadline (0 when past). */
static long left_ms(const struct pt_otlp_sender *s)
{
	uint64_t now = pt_mono_ns();

	return now >= s->deadline ? 0 : (long)((s->deadline - now) / 1000000u);
}

static void fail(struct pt_otlp_sender *s, const char *why, unsigned tries)
{
	struct pt_sb msg = PT_SB_INIT;

	url_for_message(s->o->url, &msg);
	if (tries > 1)
		pt_warn_failure("OTLP export to %s failed after %u "
				"attempts: %s", msg.buf, tries, why);
	else
		pt_warn_failure("OTLP export to %s failed: %s", msg.buf, why);
	pt_sb_release(&msg);
}

static void fail_reply(struct pt_otlp_sender *s, long code, unsigned tries)
{
	struct pt_sb why = PT_SB_INIT;
	size_t i;

	pt_sb_addf(&why, "HTTP %ld", code);
	/* A short text reply says why; binary (a protobuf Status) does not
	 * print. */
	for (i = 0; i < s->reply.len; i++)
		if ((unsigned char)s->reply.buf[i] < 0x20 &&
		    s->reply.buf[i] != '\n')
			break;
	if (s->reply.len && i == s->reply.len) {
		s->reply.buf[strcspn(s->reply.buf, "\r\n")] = '\0';
		pt_sb_addf(&why, ": %s", s->reply.buf);
	}
	fail(s, why.buf, tries);
	pt_sb_release(&why);
}

static int post(struct pt_otlp_sender *s);

/* Compress and post b, with the retries; 0 or -1 (warned). */
static int send_now(struct pt_otlp_sender *s, const struct pt_otlp_batch *b)
{
	uint64_t now;
	int rc;

	if (s->o->gzip)
		gzip_body(s, b);
	else
		body_plain(s, b);
	curl_easy_setopt(s->curl, CURLOPT_POSTFIELDS, s->body.buf);
	curl_easy_setopt(s->curl, CURLOPT_POSTFIELDSIZE_LARGE,
			 (curl_off_t)s->body.len);
	s->deadline = pt_mono_ns() + s->left_ns;
	rc = post(s);
	now = pt_mono_ns();
	s->left_ns = now < s->deadline ? s->deadline - now : 0;
	return rc;
}

/* POST s->body until it is taken, refused, or the deadline passes. */
static int post(struct pt_otlp_sender *s)
{
	long backoff = BACKOFF_FIRST_MS, code, left;
	unsigned tries = 0;
	CURLcode rc;

	for (;;) {
		left = left_ms(s);
		if (!left) {
			fail(s, tries ? "no answer before the deadline" :
				 "the deadline passed", tries);
			return -1;
		}
		curl_easy_setopt(s->curl, CURLOPT_TIMEOUT_MS,
				 left < s->o->timeout_ms ? left :
				 s->o->timeout_ms);
		s->reply.len = 0;
		s->retry_after_ms = -1;
		s->errbuf[0] = '\0';
		tries++;
		s->requests++;
		s->bytes += s->body.len;
		rc = curl_easy_perform(s->curl);
		code = 0;
		if (rc == CURLE_OK) {
			curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE,
					  &code);
			if (code >= 200 && code < 300)
				return 0;
			if (!retryable_status(code)) {
				fail_reply(s, code, tries);
				return -1;
			}
		} else if (!retryable_error(rc)) {
			struct pt_sb why = PT_SB_INIT;

			if (rc == CURLE_PEER_FAILED_VERIFICATION ||
			    rc == CURLE_SSL_CACERT_BADFILE)
				pt_sb_addstr(&why, "its TLS certificate is not "
					     "trusted (give its CA with "
					     "OTEL_EXPORTER_OTLP_CERTIFICATE): ");
			pt_sb_addstr(&why, s->errbuf[0] ? s->errbuf :
				     curl_easy_strerror(rc));
			fail(s, why.buf, tries);
			pt_sb_release(&why);
			return -1;
		}
		/* Retry: after Retry-After if the receiver gave one. */
		left = left_ms(s);
		if ((rc == CURLE_COULDNT_CONNECT && tries >= CONNECT_TRIES) ||
		    (rc == CURLE_OPERATION_TIMEDOUT && tries >= TIMEOUT_TRIES))
			left = 0;
		{
			long wait = s->retry_after_ms >= 0 ?
				    s->retry_after_ms : backoff;

			if (wait >= left) {
				if (code)
					fail_reply(s, code, tries);
				else
					fail(s, s->errbuf[0] ? s->errbuf :
					     curl_easy_strerror(rc), tries);
				return -1;
			}
			sleep_ms(wait);
		}
		s->retries++;
		if (backoff < BACKOFF_MAX_MS)
			backoff *= 2;
	}
}

void pt_otlp_sender_counts(const struct pt_otlp_sender *s,
			   unsigned long *requests, unsigned long *retries,
			   uint64_t *bytes)
{
	*requests = s->requests;
	*retries = s->retries;
	*bytes = s->bytes;
}

void pt_otlp_sender_free(struct pt_otlp_sender *s)
{
	struct curl_slist *h;

	if (!s)
		return;
	if (s->threaded)
		pt_worker_stop(&s->w);
	pt_otlp_batch_free(&s->pending);
	/* The header values may be keys: not left in freed memory. */
	for (h = s->headers; h; h = h->next)
		memset(h->data, 0, strlen(h->data));
	curl_slist_free_all(s->headers);
	curl_easy_cleanup(s->curl);
	curl_global_cleanup();
	pt_sb_release(&s->body);
	pt_sb_release(&s->reply);
	free(s);
}
