-- The month end an instant is at (tickq.month_end_at): the month's last day or the next
-- month's first, in the zone asked; what tickq check names when a starved kind's worst wait
-- began there outside a month-end window.
BEGIN;
SELECT plan(8);

SELECT is(tickq.month_end_at('UTC', '2027-02-28 09:00Z'), date '2027-02-28', 'the last day of a 28-day month');
SELECT is(tickq.month_end_at('UTC', '2027-03-01 00:00Z'), date '2027-02-28', 'the next month''s first day');
SELECT is(tickq.month_end_at('UTC', '2028-02-28 12:00Z'), NULL::date, 'the 28th of a leap February is not its end');
SELECT is(tickq.month_end_at('UTC', '2028-02-29 12:00Z'), date '2028-02-29', 'the 29th is');
SELECT is(tickq.month_end_at('UTC', '2027-04-15 12:00Z'), NULL::date, 'the middle of a month');
SELECT is(tickq.month_end_at('Europe/Berlin', '2027-03-31 23:30Z'), date '2027-03-31',
    'April 1st at 01:30 in Berlin (CEST) is at the end of March');
SELECT is(tickq.month_end_at('America/New_York', '2027-05-01 02:30Z'), date '2027-04-30',
    'the 1st of May in UTC is still April 30th in New York');
SELECT is(tickq.month_end_at('America/New_York', '2027-05-02 02:30Z'), date '2027-04-30',
    'May 1st in New York');

SELECT * FROM finish();
ROLLBACK;
