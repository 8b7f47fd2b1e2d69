from lomote import domain_events


def test_it_calls_subscribers_in_registration_order_once_each():
    # given two subscribers (one registered twice)
    calls = []

    def first(**data):
        calls.append(("first", data))

    def second(**data):
        calls.append(("second", data))

    domain_events.subscribe("test.happened")(first)
    domain_events.subscribe("test.happened")(second)
    domain_events.subscribe("test.happened")(first)
    # when the event is published
    domain_events.publish("test.happened", job=7)
    # then each ran once, in order, with the data
    assert calls == [("first", {"job": 7}), ("second", {"job": 7})]
    # and an event nobody listens to is fine
    domain_events.publish("test.nobody_listens", job=8)
