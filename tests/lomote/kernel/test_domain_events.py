from lomote.kernel import domain_events


def test_it_calls_subscribers_in_registration_order_once_each():
    # given two subscribers (one subscribed twice), for this test only
    calls = []

    def first(**data):
        calls.append(("first", data))

    def second(**data):
        calls.append(("second", data))

    with (
        domain_events.subscribed("test.happened", first),
        domain_events.subscribed("test.happened", second),
        domain_events.subscribed("test.happened", first),
    ):
        # when the event is published
        domain_events.publish("test.happened", job=7)
        # then each ran once, in order, with the data
        assert calls == [("first", {"job": 7}), ("second", {"job": 7})]
        assert domain_events.subscribers("test.happened") == [first, second]
        # and an event nobody listens to is fine
        domain_events.publish("test.nobody_listens", job=8)

    # then nothing stays subscribed after the block: a later publish reaches nobody
    assert domain_events.subscribers("test.happened") == []
    domain_events.publish("test.happened", job=9)
    assert len(calls) == 2


def test_it_leaves_a_subscriber_that_was_there_before_the_block():
    # given a handler already subscribed, as an app's ready() does (the outer block stands for it)
    def reaction(**data):
        pass

    with domain_events.subscribed("test.app_reaction", reaction):
        # when a test scopes the same handler again
        with domain_events.subscribed("test.app_reaction", reaction):
            pass
        # then the outer registration survives the inner block
        assert domain_events.subscribers("test.app_reaction") == [reaction]
    assert domain_events.subscribers("test.app_reaction") == []
