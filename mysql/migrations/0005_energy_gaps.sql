-- Migration 0005: explicit gaps between node energy samples. Safe to run
-- again. Written by mxqd_energy.c, read by mxqadmin power usage; see
-- mxq_energy(7).

-- prev_time: the sample_time of the previous row of the same host when
-- every interval between the two was measured by one mxqd; NULL when there
-- is a gap before this row (the first row of an mxqd, a source that failed,
-- samples lost before they were written). Rows written before this
-- migration have NULL: they count as not covered.
ALTER TABLE mxq_power_sample
    ADD COLUMN IF NOT EXISTS prev_time TIMESTAMP(3) NULL DEFAULT NULL;
