/*
 * tests/ipmi_sim_dcmi.c - an ipmi_sim (OpenIPMI lanserv) plugin that makes
 * the simulated BMC answer DCMI "Get Power Reading", so mxqd's ipmi energy
 * source can be tested over the LAN against 127.0.0.1. Test-only; never
 * installed.
 *
 * Use: tests/lib/bmc.sh puts this line into the simulator's lan.conf
 *
 *	loadlib "BUILD_DIR/tests/ipmi_sim_dcmi.so" "WATTS_FILE"
 *
 * and a test steers the BMC by rewriting WATTS_FILE at any time:
 *
 *	a number (first line; decimals are rounded)  current power in watts;
 *	                                             min/max/average are kept
 *	                                             over all readings so far
 *	the word "fail" anywhere                     completion code 0xD5 (not
 *	                                             supported in present state)
 *	missing, unreadable, no number               a valid answer with power
 *	                                             measurement not active and
 *	                                             all fields zero, as a BMC
 *	                                             without a sensor answers
 *
 * The file is read afresh on every request. The statistics period is the
 * time since the plugin was loaded, the timestamp is the simulator's
 * clock. Only Get Power Reading (mode 1, system power statistics, or
 * mode 2, enhanced; both answered alike) is implemented: a request of the
 * wrong length gets 0xC7, another mode 0xCC, and every other DCMI command
 * "invalid command" (0xC1).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <OpenIPMI/ipmi_err.h>
#include <OpenIPMI/serv.h>
#include <OpenIPMI/mcserv.h>

#define DCMI_GROUP_EXTENSION		0xdc
#define DCMI_CMD_GET_POWER_READING	0x02
#define DCMI_MODE_SYSTEM_STATS		0x01
#define DCMI_MODE_ENHANCED_STATS	0x02
#define DCMI_POWER_MEASUREMENT_ACTIVE	0x40

/* group extension, mode, mode attributes, reserved */
#define POWER_READING_REQ_LEN		4

/* Largest file we look at; a test writes a number or "fail". */
#define WATTS_FILE_MAX			256

struct dcmi_sim {
	char watts_file[4096];		/* path from the loadlib init string */
	struct timespec start;		/* CLOCK_MONOTONIC at load: period origin */
	uint64_t n_readings;		/* valid readings answered so far */
	uint64_t sum_watts;		/* their sum, for the running mean */
	uint16_t min_watts, max_watts;
};

static struct dcmi_sim sim;

enum watts_status { WATTS_OK, WATTS_NONE, WATTS_FAIL };

/*
 * What the watts file says now. A value that does not fit a 16-bit DCMI
 * field is clamped; negative or non-finite values count as no reading.
 */
static enum watts_status read_watts(const char *path, uint16_t *ret_watts)
{
	char buf[WATTS_FILE_MAX + 1], *end;
	size_t n;
	double w;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return WATTS_NONE;
	n = fread(buf, 1, WATTS_FILE_MAX, f);
	fclose(f);
	buf[n] = '\0';

	if (strstr(buf, "fail"))
		return WATTS_FAIL;

	buf[strcspn(buf, "\n")] = '\0';
	errno = 0;
	w = strtod(buf, &end);
	if (end == buf || errno == ERANGE || !isfinite(w) || w < 0)
		return WATTS_NONE;
	while (*end == ' ' || *end == '\t' || *end == '\r')
		end++;
	if (*end != '\0')
		return WATTS_NONE;

	*ret_watts = w >= UINT16_MAX ? UINT16_MAX : (uint16_t)(w + 0.5);
	return WATTS_OK;
}

static void put_le16(unsigned char *p, uint16_t v)
{
	p[0] = v & 0xff;
	p[1] = v >> 8;
}

static void put_le32(unsigned char *p, uint32_t v)
{
	put_le16(p, v & 0xffff);
	put_le16(p + 2, v >> 16);
}

static uint32_t ms_since_start(void)
{
	struct timespec now;
	int64_t ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (int64_t)(now.tv_sec - sim.start.tv_sec) * 1000 +
	     (now.tv_nsec - sim.start.tv_nsec) / 1000000;
	return ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
}

/* rdata[0] completion code, rdata[1] group extension, then 17 bytes. */
static void get_power_reading(msg_t *msg, unsigned char *rdata,
			      unsigned int *rdata_len)
{
	unsigned char *p = rdata + 2;
	uint16_t watts = 0;

	if (msg->len != POWER_READING_REQ_LEN) {
		rdata[0] = IPMI_REQUEST_DATA_LENGTH_INVALID_CC;
		*rdata_len = 2;
		return;
	}
	if (msg->data[1] != DCMI_MODE_SYSTEM_STATS &&
	    msg->data[1] != DCMI_MODE_ENHANCED_STATS) {
		rdata[0] = IPMI_INVALID_DATA_FIELD_CC;
		*rdata_len = 2;
		return;
	}

	switch (read_watts(sim.watts_file, &watts)) {
	case WATTS_FAIL:
		rdata[0] = IPMI_NOT_SUPPORTED_IN_PRESENT_STATE_CC;
		*rdata_len = 2;
		return;
	case WATTS_NONE:
		rdata[0] = 0;
		memset(p, 0, 17);
		*rdata_len = 2 + 17;
		return;
	case WATTS_OK:
		break;
	}

	if (sim.n_readings == 0 || watts < sim.min_watts)
		sim.min_watts = watts;
	if (sim.n_readings == 0 || watts > sim.max_watts)
		sim.max_watts = watts;
	sim.n_readings++;
	sim.sum_watts += watts;

	rdata[0] = 0;
	put_le16(p, watts);
	put_le16(p + 2, sim.min_watts);
	put_le16(p + 4, sim.max_watts);
	put_le16(p + 6, (uint16_t)((sim.sum_watts + sim.n_readings / 2) /
				   sim.n_readings));
	put_le32(p + 8, (uint32_t)time(NULL));
	put_le32(p + 12, ms_since_start());
	p[16] = DCMI_POWER_MEASUREMENT_ACTIVE;
	*rdata_len = 2 + 17;
}

/* NetFn 0x2C with msg->data[0] == 0xDC; msg->data holds the whole request. */
static void handle_dcmi(lmc_data_t *mc, msg_t *msg, unsigned char *rdata,
			unsigned int *rdata_len, void *cb_data)
{
	switch (msg->cmd) {
	case DCMI_CMD_GET_POWER_READING:
		get_power_reading(msg, rdata, rdata_len);
		break;
	default:
		handle_invalid_cmd(mc, rdata, rdata_len);
		return;
	}
	rdata[1] = DCMI_GROUP_EXTENSION;
}

int ipmi_sim_module_print_version(sys_data_t *sys, const char *initstr)
{
	printf("IPMI Simulator MXQ test DCMI power reading module\n");
	return 0;
}

int ipmi_sim_module_init(sys_data_t *sys, const char *initstr)
{
	if (!initstr || !*initstr ||
	    strlen(initstr) >= sizeof(sim.watts_file)) {
		sys->log(sys, OS_ERROR, NULL,
			 "ipmi_sim_dcmi: init string must be the watts file path");
		return EINVAL;
	}
	strcpy(sim.watts_file, initstr);
	clock_gettime(CLOCK_MONOTONIC, &sim.start);
	ipmi_emu_register_group_extension_handler(DCMI_GROUP_EXTENSION,
						  handle_dcmi, NULL);
	return 0;
}
