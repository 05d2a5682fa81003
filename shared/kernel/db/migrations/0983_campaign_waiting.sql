-- A campaign whose next call money cannot fund (issue #33): `waiting` says why (`daily_cap` or `balance`) and
-- `waiting_since` when that pause began (one `campaign.paused` webhook per pause is keyed on it); both null while
-- it dials. `api_key_id`: the key that created the campaign, whose own daily cap its calls count against.
-- SQL only in shared/domains/campaigns/store.ts.
alter table campaigns add column waiting text, add column waiting_since timestamptz, add column api_key_id text;
