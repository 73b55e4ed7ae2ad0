/*
 * mxqd_redfish - HTTPS requests to a Redfish BMC through libcurl, shared by
 * the redfish power transport (mxqd_power_redfish.c) and the redfish
 * energy source (mxqd_energy_redfish.c). The only header that includes
 * libcurl.
 *
 * A connection is one BMC: https://BMC (bmc "host[:port]"), credentials
 * from the power secrets file (redfish_user, redfish_password), either
 * HTTP basic authentication on every request or a Redfish session (POST
 * /redfish/v1/SessionService/Sessions once, its X-Auth-Token on every
 * later request, DELETE of the session at close). TLS peer and host
 * verification stay on unless the caller turns them off explicitly; a CA
 * file replaces the system's CAs. Every request is bounded by timeout_ms
 * (connect and transfer).
 *
 * Errors: negative errno with one line naming the BMC, the method and URL
 * path, the HTTP status and the Redfish message (error.@Message.
 * ExtendedInfo) in errbuf; never the password or the token.
 */
#ifndef MXQD_REDFISH_H
#define MXQD_REDFISH_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include <curl/curl.h>

struct mxqd_redfish_settings {
	const char *bmc;          /* host[:port] */
	const char *user;         /* redfish_user of the secrets file */
	const char *password;     /* redfish_password */
	const char *ca_file;      /* NULL or "": the system's CAs */
	bool insecure;            /* no TLS verification at all */
	bool session;             /* Redfish session instead of basic auth */
	unsigned timeout_ms;      /* one request */
	uint64_t deadline_ms;     /* mx_now_boottime_ms: no request starts unless its
	                             timeout_ms ends by it; 0 = none (the logout) */
};

struct mxqd_redfish {
	CURL *curl;
	struct mxqd_redfish_settings s;
	char token_header[1040];  /* "X-Auth-Token: ..." while a session is open */
	char session_path[512];   /* its URI, deleted at close */
	char *body;               /* the last answer's body, NUL-terminated */
	size_t len, cap;
	long status;              /* its HTTP status */
	char location[512];       /* its Location header (path), if any */
	char token[1024];         /* its X-Auth-Token header, if any */
	bool token_cut;           /* ... was longer than that */
};

/*
 * Why S cannot be used at all (no BMC address, no password, no user), or
 * NULL.
 */
const char *mxqd_redfish_unusable(const struct mxqd_redfish_settings *s);

/*
 * Prepare a connection to S's BMC and, with S->session, log in. The
 * strings of S must outlive the connection. 0 or a negative errno (see
 * mxqd_redfish_request) with the reason in errbuf; on failure nothing is
 * left open.
 */
int mxqd_redfish_open(struct mxqd_redfish *c, const struct mxqd_redfish_settings *s,
		      char *errbuf, size_t errlen);

/*
 * METHOD ("GET", "POST", "DELETE") PATH (starting with /) with the JSON
 * body JSON (NULL: none). On 2xx: 0, the answer in c->body (may be empty).
 * Otherwise: -EACCES (401, 403: credentials or privilege), -ENOENT (404),
 * -EAGAIN (503 and other 5xx: the BMC is busy), -EPROTO (other statuses),
 * -ETIMEDOUT (no answer within the timeout), -ECONNREFUSED (nobody
 * listens), -EPERM (the BMC's TLS certificate is not trusted), -EIO
 * (other transport errors).
 */
int mxqd_redfish_request(struct mxqd_redfish *c, const char *method, const char *path,
			 const char *json, char *errbuf, size_t errlen);

/* GET PATH, as mxqd_redfish_request. */
int mxqd_redfish_get(struct mxqd_redfish *c, const char *path, char *errbuf, size_t errlen);

/* End the session (DELETE, errors ignored), free everything, wipe the
 * token. Safe to call twice and on a connection that never opened. */
void mxqd_redfish_close(struct mxqd_redfish *c);

/*
 * The system's path: S_PATH when not empty, else the first member of
 * /redfish/v1/Systems (found through the service root's Systems link).
 * 0 or a negative errno with the reason in errbuf.
 */
int mxqd_redfish_find_system(struct mxqd_redfish *c, const char *s_path, char *buf, size_t len,
			     char *errbuf, size_t errlen);

#endif
