-- Migration 0004: per-host transport settings for the ipmi and ssh
-- transports (issue 5). New columns at the end of mxq_power only; nothing
-- an older client reads changes. Safe to run again.

ALTER TABLE mxq_power
    ADD COLUMN IF NOT EXISTS ipmi_workarounds  VARCHAR(255) NOT NULL DEFAULT '',  -- libfreeipmi workaround names, comma-separated (e.g. opensesspriv)
    ADD COLUMN IF NOT EXISTS ssh_address       VARCHAR(255) NOT NULL DEFAULT '';  -- host[:port] for the ssh transport; empty: the hostname, port 22
