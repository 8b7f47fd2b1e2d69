import pytest

pytestmark = pytest.mark.django_db

HUGE = "9" * 30


@pytest.mark.parametrize(
    "path",
    [
        f"/api/v1/workspaces/{HUGE}/",
        f"/api/v1/workspaces/{HUGE}/events/",
        f"/api/v1/workspaces/1/tasks/{HUGE}/",
        f"/api/v1/workspaces/1/members/{HUGE}/",
    ],
)
def test_it_answers_404_for_ids_too_large_for_the_database(client_for, alice, workspace, path):
    # when an id that cannot fit a 64-bit column is requested
    response = client_for(alice).get(path.replace("/1/", f"/{workspace.pk}/"))
    # then it is simply not found, with the error body, never a 500
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
