package lambdaemu

// KillBusy SIGKILLs every environment of the function that is running an
// invocation, as a crash would, and waits until each has exited: its
// invocation fails and the next one gets a fresh environment (a cold
// start). It returns how many it killed. Tests use it to show that a
// crash in the middle of work loses nothing.
func (f *Function) KillBusy() int {
	f.mu.Lock()
	var busy []*instance
	for inst := range f.live {
		inst.mu.Lock()
		if inst.current != nil {
			busy = append(busy, inst)
		}
		inst.mu.Unlock()
	}
	f.mu.Unlock()
	for _, inst := range busy {
		inst.kill("SIGKILL")
	}
	return len(busy)
}
