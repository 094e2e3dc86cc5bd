"""The boosting loop and what it runs each round: setup and teardown of a
training, the callbacks, sampling, evaluation and the checks that every rank
trains alike."""
