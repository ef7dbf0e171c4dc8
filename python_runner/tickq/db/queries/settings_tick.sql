SELECT tick FROM tickq.settings
