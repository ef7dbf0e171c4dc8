SELECT tickq.next_due_at(now() + %(within)s * interval '1 second') - now() AS wait
