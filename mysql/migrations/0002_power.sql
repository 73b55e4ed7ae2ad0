-- Migration 0002: power management tables (mxq_power, mxq_power_leader,
-- mxq_power_event). New tables only: nothing an older client uses changes.
-- Safe to run again.

-- Node power state (one row per managed host). Written by the power
-- manager leader (every write carries its epoch in writer_epoch and is
-- fenced by the lease), by each node's mxqd for its own row (registration,
-- drain acknowledgement, last job end) and by mxqadmin. See mxq_power(5).
CREATE TABLE IF NOT EXISTS mxq_power (
    hostname          VARCHAR(64)   NOT NULL,
    state             VARCHAR(16)   NOT NULL DEFAULT 'UNKNOWN',  -- ON DRAINING POWERING_OFF OFF POWERING_ON FAILED UNKNOWN
    state_since       TIMESTAMP(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    desired_state     VARCHAR(16)   NOT NULL DEFAULT 'ON',       -- ON or OFF; OFF closes the job claim
    reason            VARCHAR(1000) NOT NULL DEFAULT '',         -- why the last decision was taken
    admin_off         TINYINT(1)    NOT NULL DEFAULT 0,          -- powered off by an admin: never woken automatically
    excluded          TINYINT(1)    NOT NULL DEFAULT 0,          -- left alone by the power manager
    failure_count     INT UNSIGNED  NOT NULL DEFAULT 0,
    failure_reason    VARCHAR(1000) NOT NULL DEFAULT '',
    node_class        VARCHAR(64)   NOT NULL DEFAULT '',
    efficiency_rank   INT           NOT NULL DEFAULT 100,        -- lower: woken first, suspended last
    transport_on      VARCHAR(16)   NOT NULL DEFAULT 'exec',     -- how to power on: exec ipmi wol
    transport_off     VARCHAR(16)   NOT NULL DEFAULT 'self',     -- how to power off: self exec ipmi ssh
    bmc_address       VARCHAR(255)  NOT NULL DEFAULT '',         -- host[:port] of the BMC (ipmi)
    mac_address       VARCHAR(17)   NOT NULL DEFAULT '',         -- for Wake-on-LAN
    broadcast_address VARCHAR(64)   NOT NULL DEFAULT '',         -- Wake-on-LAN target address
    admin_request     VARCHAR(16)   NOT NULL DEFAULT '',         -- ON or OFF, set by mxqadmin, carried out by the leader
    admin_request_reason VARCHAR(1000) NOT NULL DEFAULT '',
    explanation       VARCHAR(2000) NOT NULL DEFAULT '',         -- the leader's last word on this node (mxqadmin power explain)
    node_ack          VARCHAR(16)   NOT NULL DEFAULT '',         -- node's answer to a drain: IDLE or BUSY
    node_ack_at       TIMESTAMP(3)  NULL DEFAULT NULL,
    node_seen_at      TIMESTAMP(3)  NULL DEFAULT NULL,           -- last registration of the node's mxqd
    last_job_end      TIMESTAMP(3)  NULL DEFAULT NULL,
    current_watts     DOUBLE        NOT NULL DEFAULT 0,
    energy_joules     DOUBLE        NOT NULL DEFAULT 0,          -- cumulative, as measured by the node
    boot_count        INT UNSIGNED  NOT NULL DEFAULT 0,
    cycles_today      INT UNSIGNED  NOT NULL DEFAULT 0,
    cycles_day        DATE          NULL DEFAULT NULL,           -- the day cycles_today counts
    last_boot_ok_at   TIMESTAMP(3)  NULL DEFAULT NULL,
    writer_epoch      INT8 UNSIGNED NOT NULL DEFAULT 0,          -- leader epoch of the last leader write
    mtime             TIMESTAMP(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),
    PRIMARY KEY (hostname),
    INDEX (state)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- The power manager's lease: exactly one row (id 1). A candidate takes it
-- over when lease_expires has passed on the database clock; every takeover
-- increments epoch.
CREATE TABLE IF NOT EXISTS mxq_power_leader (
    id              TINYINT UNSIGNED NOT NULL,
    epoch           INT8 UNSIGNED NOT NULL DEFAULT 0,
    holder          VARCHAR(255)  NOT NULL DEFAULT '',   -- host/daemon[pid]
    lease_expires   TIMESTAMP(3)  NOT NULL DEFAULT '1970-01-01 00:00:01.000',
    acquired_at     TIMESTAMP(3)  NULL DEFAULT NULL,
    renewed_at      TIMESTAMP(3)  NULL DEFAULT NULL,
    last_tick_at    TIMESTAMP(3)  NULL DEFAULT NULL,
    config_hash     VARCHAR(16)   NOT NULL DEFAULT '',
    dry_run         TINYINT(1)    NOT NULL DEFAULT 0,
    tick_summary    VARCHAR(1000) NOT NULL DEFAULT '',
    policy_state    VARCHAR(1000) NOT NULL DEFAULT '',   -- rate-limit buckets and breaker, carried across takeovers
    PRIMARY KEY (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- Append-only audit of every power state transition.
CREATE TABLE IF NOT EXISTS mxq_power_event (
    event_id    INT8 UNSIGNED NOT NULL AUTO_INCREMENT,
    event_time  TIMESTAMP(3)  NOT NULL DEFAULT CURRENT_TIMESTAMP(3),
    hostname    VARCHAR(64)   NOT NULL,
    from_state  VARCHAR(16)   NOT NULL,
    to_state    VARCHAR(16)   NOT NULL,
    reason      VARCHAR(1000) NOT NULL DEFAULT '',
    epoch       INT8 UNSIGNED NOT NULL DEFAULT 0,     -- leader epoch (0 for admin and node events)
    actor       VARCHAR(16)   NOT NULL,               -- leader, admin, node
    PRIMARY KEY (event_id),
    INDEX (hostname, event_time),
    INDEX (event_time)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
