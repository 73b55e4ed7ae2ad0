/*
 * mxqd_redfish - HTTPS requests to a Redfish BMC (see mxqd_redfish.h).
 *
 * One easy handle per connection, reused for every request so the TLS
 * session and the TCP connection are kept. Answers are read into a
 * growing buffer (at most BODY_MAX bytes: a BMC answering more is broken);
 * the Location and X-Auth-Token headers are kept for the session login.
 * No proxy is ever used (a BMC is on the management network, and the
 * credentials must not go elsewhere), redirects are not followed, only
 * https is spoken. Credentials reach libcurl through its options, never
 * through a URL or an argv.
 */
#define _GNU_SOURCE
#include "mxqd_redfish.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mx_util.h"
#include "mxq_redfish.h"

#define BODY_MAX (1024 * 1024)
#define SESSIONS_PATH "/redfish/v1/SessionService/Sessions"

_Static_assert(sizeof(((struct mxqd_redfish *)0)->token_header) >=
	       sizeof("X-Auth-Token: ") + sizeof(((struct mxqd_redfish *)0)->token) - 1,
	       "a kept token fits into its header");

const char *mxqd_redfish_unusable(const struct mxqd_redfish_settings *s)
{
	if (!s->bmc || !s->bmc[0])
		return "transport redfish needs the BMC address (mxqadmin power set HOST bmc=HOST[:PORT])";
	if (!s->user || !s->user[0])
		return "transport redfish needs redfish_user in the power secrets file";
	if (!s->password)
		return "transport redfish needs redfish_password in the power secrets file";
	if (strpbrk(s->bmc, "/@?# \t"))
		return "the BMC address for redfish is HOST[:PORT], without scheme or path";
	return NULL;
}

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
	struct mxqd_redfish *c = arg;
	size_t add = size * n;

	if (c->len + add + 1 > BODY_MAX)
		return 0;  /* libcurl fails the transfer (CURLE_WRITE_ERROR) */
	if (c->len + add + 1 > c->cap) {
		size_t cap = c->cap ? c->cap : 4096;
		char *b;

		while (cap < c->len + add + 1)
			cap *= 2;
		b = realloc(c->body, cap);
		if (!b)
			return 0;
		c->body = b;
		c->cap = cap;
	}
	memcpy(c->body + c->len, data, add);
	c->len += add;
	c->body[c->len] = '\0';
	return add;
}

/* Copy the value of header NAME from LINE (N bytes) into buf, if it is;
 * false when it was cut to fit. */
static bool header_value(const char *line, size_t n, const char *name, char *buf, size_t len)
{
	size_t nl = strlen(name), vl;

	if (n <= nl || strncasecmp(line, name, nl) != 0 || line[nl] != ':')
		return true;
	line += nl + 1;
	n -= nl + 1;
	while (n && isspace((unsigned char)*line))
		line++, n--;
	while (n && isspace((unsigned char)line[n - 1]))
		n--;
	vl = n < len ? n : len - 1;
	memcpy(buf, line, vl);
	buf[vl] = '\0';
	return vl == n;
}

static size_t on_header(char *data, size_t size, size_t n, void *arg)
{
	struct mxqd_redfish *c = arg;

	header_value(data, size * n, "Location", c->location, sizeof(c->location));
	if (!header_value(data, size * n, "X-Auth-Token", c->token, sizeof(c->token)))
		c->token_cut = true;
	return size * n;
}

static void wipe(char *p, size_t n)
{
	explicit_bzero(p, n);
}

/* The errno and one line for a failed transfer. */
static int transfer_error(const struct mxqd_redfish *c, CURLcode e, const char *method,
			  const char *path, const char *detail, char *errbuf, size_t errlen)
{
	const char *d = detail[0] ? detail : curl_easy_strerror(e);

	switch (e) {
	case CURLE_OPERATION_TIMEDOUT:
		snprintf(errbuf, errlen, "BMC %s did not answer %s %s within %u ms", c->s.bmc, method,
			 path, c->s.timeout_ms);
		return -ETIMEDOUT;
	case CURLE_COULDNT_CONNECT:
		snprintf(errbuf, errlen, "BMC %s: %s %s: cannot connect (%s)", c->s.bmc, method, path, d);
		return -ECONNREFUSED;
	case CURLE_PEER_FAILED_VERIFICATION:
		snprintf(errbuf, errlen, "BMC %s: %s %s: TLS certificate not trusted (%s); give its CA "
			 "(mxqadmin power set HOST redfish_ca=FILE) or turn verification off "
			 "(redfish_tls=insecure)", c->s.bmc, method, path, d);
		return -EPERM;
	case CURLE_SSL_CACERT_BADFILE:
		snprintf(errbuf, errlen, "BMC %s: CA file '%s' cannot be used (%s)", c->s.bmc,
			 c->s.ca_file ? c->s.ca_file : "", d);
		return -EINVAL;
	case CURLE_COULDNT_RESOLVE_HOST:
		snprintf(errbuf, errlen, "BMC address '%s' cannot be resolved (%s)", c->s.bmc, d);
		return -EINVAL;
	default:
		snprintf(errbuf, errlen, "BMC %s: %s %s failed: %s", c->s.bmc, method, path, d);
		return -EIO;
	}
}

/*
 * Every SECRET in BUF (LEN bytes) replaced by MARK: a BMC's message may
 * quote what it was sent (Redfish's own "The value '%1' for the property
 * %2 ..." messages do), and BUF goes to logs and the database.
 */
static void hide(char *buf, size_t len, const char *secret, const char *mark)
{
	size_t sl = secret ? strlen(secret) : 0, o = 0;
	const char *p, *hit;
	char *out;

	if (!sl || !len || !strstr(buf, secret))
		return;
	out = malloc(len);
	if (!out) {
		snprintf(buf, len, "(the error message quoted a secret)");
		return;
	}
	for (p = buf;; p = hit + sl) {
		size_t n;

		hit = strstr(p, secret);
		n = hit ? (size_t)(hit - p) : strlen(p);
		n = n < len - 1 - o ? n : len - 1 - o;
		memcpy(out + o, p, n);
		o += n;
		if (!hit)
			break;
		n = strlen(mark) < len - 1 - o ? strlen(mark) : len - 1 - o;
		memcpy(out + o, mark, n);
		o += n;
	}
	out[o] = '\0';
	memcpy(buf, out, o + 1);
	wipe(out, len);
	free(out);
}

/* The errno and one line for an HTTP status that is not 2xx. */
static int status_error(const struct mxqd_redfish *c, const char *method, const char *path,
			char *errbuf, size_t errlen)
{
	static const char token_prefix[] = "X-Auth-Token: ";
	char msg[384];

	mxq_redfish_error_message(c->body, msg, sizeof(msg));
	snprintf(errbuf, errlen, "BMC %s: %s %s: HTTP %ld%s%s%s", c->s.bmc, method, path, c->status,
		 msg[0] ? ": " : "", msg,
		 c->status == 401 ? " (user or password wrong: see the power secrets file)" : "");
	hide(errbuf, errlen, c->s.password, "(password)");
	if (c->token_header[0])
		hide(errbuf, errlen, c->token_header + strlen(token_prefix), "(session token)");
	if (c->status == 401 || c->status == 403)
		return -EACCES;
	if (c->status == 404)
		return -ENOENT;
	if (c->status >= 500)
		return -EAGAIN;
	return -EPROTO;
}

int mxqd_redfish_request(struct mxqd_redfish *c, const char *method, const char *path,
			 const char *json, char *errbuf, size_t errlen)
{
	char url[1024], detail[CURL_ERROR_SIZE] = "";
	struct curl_slist *h = NULL, *h2;
	CURLcode e;
	long timeout_ms;
	CURL *k = c->curl;

	c->len = 0;
	if (c->body)
		c->body[0] = '\0';
	c->status = 0;
	c->location[0] = '\0';
	c->token[0] = '\0';
	c->token_cut = false;
	timeout_ms = (long)c->s.timeout_ms;
	if (c->s.deadline_ms && mx_now_boottime_ms() + c->s.timeout_ms > c->s.deadline_ms) {
		/* the call's bound, which the leader fences by: a request that
		 * could end after it does not start. Not even with its timeout
		 * cut to what is left: a BMC acts on a request whose client
		 * gave up, so a Reset sent then can land after the bound. */
		snprintf(errbuf, errlen, "BMC %s: %s %s not sent: the call's time bound is used up",
			 c->s.bmc, method, path);
		return -ETIME;  /* final: no attempt may follow */
	}
	curl_easy_setopt(k, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(k, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
	snprintf(url, sizeof(url), "https://%s%s", c->s.bmc, path);
	h = curl_slist_append(h, "Accept: application/json");
	if (h && json)
		h = (h2 = curl_slist_append(h, "Content-Type: application/json")) ? h2 : NULL;
	if (h)
		h = (h2 = curl_slist_append(h, "OData-Version: 4.0")) ? h2 : NULL;
	if (h && c->token_header[0])
		h = (h2 = curl_slist_append(h, c->token_header)) ? h2 : NULL;
	if (!h) {
		snprintf(errbuf, errlen, "no memory for a request to BMC %s", c->s.bmc);
		return -ENOMEM;
	}
	curl_easy_setopt(k, CURLOPT_URL, url);
	curl_easy_setopt(k, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(k, CURLOPT_ERRORBUFFER, detail);
	if (strcmp(method, "GET") == 0) {
		curl_easy_setopt(k, CURLOPT_HTTPGET, 1L);
	} else if (json) {
		curl_easy_setopt(k, CURLOPT_POSTFIELDS, json);
		curl_easy_setopt(k, CURLOPT_CUSTOMREQUEST, strcmp(method, "POST") ? method : NULL);
	} else {
		curl_easy_setopt(k, CURLOPT_HTTPGET, 1L);
		curl_easy_setopt(k, CURLOPT_CUSTOMREQUEST, method);
	}
	e = curl_easy_perform(k);
	curl_easy_setopt(k, CURLOPT_CUSTOMREQUEST, NULL);
	curl_easy_setopt(k, CURLOPT_POSTFIELDS, NULL);
	curl_easy_setopt(k, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(k, CURLOPT_ERRORBUFFER, NULL);
	/* the token header was copied into the list: wipe that copy */
	for (h2 = h; h2; h2 = h2->next)
		if (strncasecmp(h2->data, "X-Auth-Token:", 13) == 0)
			wipe(h2->data, strlen(h2->data));
	curl_slist_free_all(h);
	if (e != CURLE_OK)
		return transfer_error(c, e, method, path, detail, errbuf, errlen);
	curl_easy_getinfo(k, CURLINFO_RESPONSE_CODE, &c->status);
	if (c->status < 200 || c->status > 299)
		return status_error(c, method, path, errbuf, errlen);
	return 0;
}

int mxqd_redfish_get(struct mxqd_redfish *c, const char *path, char *errbuf, size_t errlen)
{
	return mxqd_redfish_request(c, "GET", path, NULL, errbuf, errlen);
}

/* PATH of a Location that may be a full URL. */
static const char *location_path(const char *loc)
{
	const char *p = strstr(loc, "://");

	if (!p)
		return loc;
	p = strchr(p + 3, '/');
	return p ? p : "";
}

/* JSON string literal of S into buf (for the login body). -ENOSPC. */
static int json_quote(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	if (len < 3)
		return -ENOSPC;
	buf[o++] = '"';
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		int n = ch == '"' || ch == '\\' ? snprintf(buf + o, len - o, "\\%c", ch) :
			ch < 0x20 ? snprintf(buf + o, len - o, "\\u%04x", ch) :
				    snprintf(buf + o, len - o, "%c", ch);

		if (n < 0 || (size_t)n >= len - o)
			return -ENOSPC;
		o += (size_t)n;
	}
	if (o + 2 > len)
		return -ENOSPC;
	buf[o++] = '"';
	buf[o] = '\0';
	return 0;
}

static int login(struct mxqd_redfish *c, char *errbuf, size_t errlen)
{
	char user[300], pw[300], body[700];
	const char *path;
	int r;

	if (json_quote(c->s.user, user, sizeof(user)) < 0 ||
	    json_quote(c->s.password, pw, sizeof(pw)) < 0) {
		snprintf(errbuf, errlen, "BMC %s: redfish_user or redfish_password too long", c->s.bmc);
		wipe(pw, sizeof(pw));
		return -EINVAL;
	}
	snprintf(body, sizeof(body), "{\"UserName\": %s, \"Password\": %s}", user, pw);
	wipe(pw, sizeof(pw));
	r = mxqd_redfish_request(c, "POST", SESSIONS_PATH, body, errbuf, errlen);
	wipe(body, sizeof(body));
	if (r < 0)
		return r;
	if (!c->token[0] || c->token_cut) {
		/* a token cut short would only earn 401s later */
		if (c->token_cut)
			snprintf(errbuf, errlen, "BMC %s: POST %s: its X-Auth-Token is longer than the "
				 "%zu bytes kept here", c->s.bmc, SESSIONS_PATH, sizeof(c->token) - 1);
		else
			snprintf(errbuf, errlen, "BMC %s: POST %s: no X-Auth-Token in the answer",
				 c->s.bmc, SESSIONS_PATH);
		wipe(c->token, sizeof(c->token));
		return -EPROTO;
	}
	snprintf(c->token_header, sizeof(c->token_header), "X-Auth-Token: %s", c->token);
	wipe(c->token, sizeof(c->token));
	path = location_path(c->location);
	if (path[0] == '/')
		snprintf(c->session_path, sizeof(c->session_path), "%s", path);
	else if (mxq_redfish_link(c->body, "@odata.id", c->session_path, sizeof(c->session_path)) < 0)
		c->session_path[0] = '\0';
	return 0;
}

int mxqd_redfish_open(struct mxqd_redfish *c, const struct mxqd_redfish_settings *s,
		      char *errbuf, size_t errlen)
{
	static bool global_done;
	const char *why;
	CURL *k;
	int r;

	memset(c, 0, sizeof(*c));
	c->s = *s;
	why = mxqd_redfish_unusable(s);
	if (why) {
		snprintf(errbuf, errlen, "%s", why);
		return -EINVAL;
	}
	if (!global_done) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
			snprintf(errbuf, errlen, "libcurl cannot start");
			return -EIO;
		}
		global_done = true;
	}
	k = c->curl = curl_easy_init();
	if (!k) {
		snprintf(errbuf, errlen, "libcurl cannot start");
		return -ENOMEM;
	}
	curl_easy_setopt(k, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(k, CURLOPT_PROTOCOLS_STR, "https");
	curl_easy_setopt(k, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(k, CURLOPT_PROXY, "");
	curl_easy_setopt(k, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(k, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(k, CURLOPT_WRITEDATA, c);
	curl_easy_setopt(k, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(k, CURLOPT_HEADERDATA, c);
	curl_easy_setopt(k, CURLOPT_SSL_VERIFYPEER, s->insecure ? 0L : 1L);
	curl_easy_setopt(k, CURLOPT_SSL_VERIFYHOST, s->insecure ? 0L : 2L);
	if (s->ca_file && s->ca_file[0]) {
		/* that CA only: not the system's directory of CAs as well */
		curl_easy_setopt(k, CURLOPT_CAINFO, s->ca_file);
		curl_easy_setopt(k, CURLOPT_CAPATH, NULL);
	}
	if (!s->session) {
		curl_easy_setopt(k, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(k, CURLOPT_USERNAME, s->user);
		curl_easy_setopt(k, CURLOPT_PASSWORD, s->password);
		return 0;
	}
	r = login(c, errbuf, errlen);
	if (r < 0)
		mxqd_redfish_close(c);
	return r;
}

void mxqd_redfish_close(struct mxqd_redfish *c)
{
	char err[256];

	if (c->curl && c->token_header[0] && c->session_path[0]) {
		/* the logout acts on nothing: it gets its own timeout */
		c->s.deadline_ms = 0;
		mxqd_redfish_request(c, "DELETE", c->session_path, NULL, err, sizeof(err));
	}
	wipe(c->token_header, sizeof(c->token_header));
	wipe(c->token, sizeof(c->token));
	if (c->curl)
		curl_easy_cleanup(c->curl);
	c->curl = NULL;
	free(c->body);
	c->body = NULL;
	c->len = c->cap = 0;
}

int mxqd_redfish_find_system(struct mxqd_redfish *c, const char *s_path, char *buf, size_t len,
			     char *errbuf, size_t errlen)
{
	char systems[MXQ_REDFISH_PATH_MAX];
	int r;

	if (s_path && s_path[0]) {
		snprintf(buf, len, "%s", s_path);
		return 0;
	}
	r = mxqd_redfish_get(c, "/redfish/v1", errbuf, errlen);
	if (r < 0)
		return r;
	r = mxq_redfish_link(c->body, "Systems", systems, sizeof(systems));
	if (r < 0) {
		snprintf(errbuf, errlen, "BMC %s: GET /redfish/v1: the service root links no Systems%s",
			 c->s.bmc, r == -ENOENT ? "" : " path on this BMC");
		return -EPROTO;
	}
	r = mxqd_redfish_get(c, systems, errbuf, errlen);
	if (r < 0)
		return r;
	r = mxq_redfish_member(c->body, 0, buf, len);
	if (r < 0) {
		snprintf(errbuf, errlen, "BMC %s: GET %s: %s", c->s.bmc, systems,
			 r == -ENOENT ? "no system in the collection" : "not a Redfish collection");
		return -EPROTO;
	}
	return 0;
}
