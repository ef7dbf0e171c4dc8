SELECT kind AS name FROM tickq.queue_status WHERE state <> 'retired' ORDER BY kind
