-- Migration 0007: per-host settings of the redfish transport (issue 21).
-- New columns at the end of mxq_power only; nothing an older client reads
-- changes. Safe to run again. The BMC address is bmc_address, as for ipmi;
-- the credentials are in the power secrets file, never here.

ALTER TABLE mxq_power
    ADD COLUMN IF NOT EXISTS redfish_system VARCHAR(255) NOT NULL DEFAULT '',        -- /redfish/v1/Systems/ID; empty: the first member of /redfish/v1/Systems
    ADD COLUMN IF NOT EXISTS redfish_ca     VARCHAR(255) NOT NULL DEFAULT '',        -- PEM CA file that signed the BMC's certificate; empty: the system's CAs
    ADD COLUMN IF NOT EXISTS redfish_tls    VARCHAR(16)  NOT NULL DEFAULT 'verify',  -- verify | insecure (no TLS verification, logged)
    ADD COLUMN IF NOT EXISTS redfish_auth   VARCHAR(16)  NOT NULL DEFAULT 'session'; -- session (X-Auth-Token) | basic
