"""Ratings across events: the skill model's store and the server's rated tables."""
